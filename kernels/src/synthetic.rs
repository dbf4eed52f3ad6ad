//! Synthetic partitions for measuring speed at sizes we cannot seal here (a 32 GiB sector's
//! partition): the witness a partition of that shape would put in a slot, with
//! pseudo-random values, and the counts its SRS must have. Proofs made from them are not
//! expected to verify: the a, b, c evaluations are random, not a satisfied circuit.
//!
//! What matters for speed is reproduced: the domain, the variable counts, the densities of
//! A and B over the aux variables, and the mix of zero / one / full-width scalars (which
//! decides how much of each MSM is skipped, batch-added or Pippenger).

use blstrs::Scalar as Fr;
use ff::Field;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::witness::{density_bit, density_count, CircuitShape, WitnessBuffers};

/// Fractions of values equal to 0 and to 1 among some aux variables; the rest are full
/// width, drawn uniform below 2^254 (a real witness's hash outputs and Poseidon states are
/// uniform below r, `cuzk bench witness` finds: the same windows' work for Pippenger).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fractions {
    pub zero: f64,
    pub one: f64,
}

/// What a drawn aux value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drawn {
    Zero,
    One,
    Full,
}

impl Fractions {
    /// The uniform 32-bit draws below which a value is 0, and 1.
    fn cuts(&self) -> (u64, u64) {
        let scale = (1u64 << 32) as f64;
        (
            (self.zero * scale) as u64,
            ((self.zero + self.one) * scale) as u64,
        )
    }
}

/// A [`ScalarMix`] ready to draw from: both strata's cuts computed once, not per value.
#[derive(Clone, Copy, Debug)]
pub struct Drawer {
    /// (outside B, in B): (zero below, one below).
    cuts: [(u64, u64); 2],
}

impl Drawer {
    /// The class of the uniform draw `u` for a variable in B or not.
    #[inline]
    pub fn draw(&self, in_b: bool, u: u32) -> Drawn {
        let (zero_below, one_below) = self.cuts[in_b as usize];
        match u as u64 {
            x if x < zero_below => Drawn::Zero,
            x if x < one_below => Drawn::One,
            _ => Drawn::Full,
        }
    }
}

/// The scalar mix of a partition's aux variables, drawn separately for the variables in B
/// and the others: B's hold several times more full-width values (hash outputs feed B), so
/// one mix for all would give the B MSMs (B_G1, B_G2) too few Pippenger terms and L, A too
/// many.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalarMix {
    pub in_b: Fractions,
    pub outside_b: Fractions,
}

impl ScalarMix {
    /// A 32 GiB PoRep partition's, predicted by `cuzk bench witness --census <the blank 32
    /// GiB partition circuit's census> --learn <the censuses of porep-2KiB-a, -b and
    /// 8MiB-a>`: each gadget's aux variables valued with the 0 / 1 / other mix that gadget
    /// has in the real witnesses (the same prediction for 8 MiB from 2 KiB alone matches the
    /// 8 MiB measurement to 0.05 points; docs/gpu.md "The scalar mix of a 32 GiB partition").
    /// Per MSM (0 % / 1 % / other %): L 51.36 / 47.33 / 1.31, A 51.52 / 47.49 / 0.99, B
    /// 48.27 / 48.01 / 3.72; the aux outside B 52.41 / 47.10 / 0.48.
    pub const PORE_32GIB: ScalarMix = ScalarMix {
        in_b: Fractions {
            zero: 0.4827,
            one: 0.4801,
        },
        outside_b: Fractions {
            zero: 0.5241,
            one: 0.4710,
        },
    };

    /// The assumption the synthetic partitions used before that measurement (45 % zeros,
    /// 45 % ones, 10 % full width everywhere), kept to relate earlier figures to new ones.
    pub const ASSUMED_45_45: ScalarMix = ScalarMix {
        in_b: Fractions {
            zero: 0.45,
            one: 0.45,
        },
        outside_b: Fractions {
            zero: 0.45,
            one: 0.45,
        },
    };

    /// "32gib" (the default of the speed runs) or "assumed".
    pub fn by_name(name: &str) -> Option<ScalarMix> {
        match name.to_ascii_lowercase().as_str() {
            "32gib" => Some(Self::PORE_32GIB),
            "assumed" => Some(Self::ASSUMED_45_45),
            _ => None,
        }
    }

    pub fn fractions(&self, in_b: bool) -> Fractions {
        if in_b {
            self.in_b
        } else {
            self.outside_b
        }
    }

    pub fn drawer(&self) -> Drawer {
        Drawer {
            cuts: [self.outside_b.cuts(), self.in_b.cuts()],
        }
    }
}

/// The shape of a synthetic partition and the statistics of its witness.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyntheticShape {
    pub name: &'static str,
    pub domain_log2: u32,
    pub num_inputs: usize,
    pub num_aux: usize,
    /// Fraction of aux variables in some A / B combination.
    pub a_density: f64,
    pub b_density: f64,
    /// How the aux values are drawn.
    pub mix: ScalarMix,
}

/// A 32 GiB PoRep partition (FIELD-NOTES.md): domain 2^27, 328 inputs, 130,169,893 aux,
/// aux density 99.7 % in A and 25.4 % in B, the scalar mix predicted for it
/// ([`ScalarMix::PORE_32GIB`]).
pub const PORE_32GIB: SyntheticShape = SyntheticShape {
    name: "32GiB",
    domain_log2: 27,
    num_inputs: 328,
    num_aux: 130_169_893,
    a_density: 0.997,
    b_density: 0.254,
    mix: ScalarMix::PORE_32GIB,
};

/// The same statistics at a size a test proves in a moment.
pub const TINY: SyntheticShape = SyntheticShape {
    name: "tiny",
    domain_log2: 12,
    num_inputs: 9,
    num_aux: 3_000,
    ..PORE_32GIB
};

impl SyntheticShape {
    pub const ALL: [SyntheticShape; 2] = [PORE_32GIB, TINY];

    pub fn by_name(name: &str) -> Option<SyntheticShape> {
        Self::ALL
            .into_iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
    }

    pub fn circuit(&self) -> CircuitShape {
        CircuitShape {
            num_constraints: 1 << self.domain_log2,
            num_inputs: self.num_inputs,
            num_aux: self.num_aux,
        }
    }

    /// Whether aux variable `i` is in A (`salt` = A_SALT) or B (B_SALT). The same for every
    /// partition and seed, as in a real circuit, so one SRS fits all of them.
    fn aux_in(&self, salt: u64, density: f64, i: usize) -> bool {
        (splitmix64(salt ^ i as u64) >> 32) < (density * (1u64 << 32) as f64) as u64
    }

    fn fill_density(&self, bits: &mut [u64], salt: u64, density: f64) {
        let n = self.num_aux;
        bits.par_iter_mut().enumerate().for_each(|(w, word)| {
            *word = (0..64)
                .map(|b| w * 64 + b)
                .filter(|&i| i < n && self.aux_in(salt, density, i))
                .fold(0u64, |acc, i| acc | 1 << (i % 64));
        });
    }

    /// Vector lengths the proving key of this shape has: ic, h, l, a, b_g1, b_g2 (the
    /// counts `groth16::steps::check_params` demands of the partition's densities).
    pub fn srs_counts(&self) -> [usize; 6] {
        let mut a = vec![0u64; self.num_aux.div_ceil(64)];
        let mut b = vec![0u64; self.num_aux.div_ceil(64)];
        self.fill_density(&mut a, A_SALT, self.a_density);
        self.fill_density(&mut b, B_SALT, self.b_density);
        let a_aux = density_count(&a, self.num_aux);
        // Every input is in B (ONE is, and PoRep's public inputs are).
        let b_all = self.num_inputs + density_count(&b, self.num_aux);
        [
            self.num_inputs,
            (1 << self.domain_log2) - 1,
            self.num_aux,
            self.num_inputs + a_aux,
            b_all,
            b_all,
        ]
    }

    /// Writes partition `seed`'s witness into `w` (sized for at least this shape) and
    /// returns the shape written: random a, b, c over the whole domain; inputs ONE then
    /// random; aux 0 / 1 / random by the mix of B's variables or the others'; the fixed
    /// densities.
    ///
    /// "Random" values are drawn from a pool of 2^16 random elements of this seed: the
    /// NTTs' and the MSMs' work does not depend on the values, and copying from a pool
    /// keeps a 32 GiB partition's 17 GB to seconds of a few cores instead of a minute.
    pub fn fill_witness(&self, seed: u64, w: WitnessBuffers<'_>) -> CircuitShape {
        let mut pool = vec![Fr::ZERO; POOL];
        fill_random(&mut pool, seed);
        let n = 1usize << self.domain_log2;
        // c only where the buffers have one (a slot has none: its prover makes c = a∘b).
        for (v, k) in [(&mut *w.a, 1u64), (&mut *w.b, 2), (&mut *w.c, 3)] {
            if !v.is_empty() {
                from_pool(&mut v[..n], &pool, seed.wrapping_add(k));
            }
        }
        let inputs = &mut w.inputs[..self.num_inputs];
        from_pool(inputs, &pool, seed ^ 0x5eed_0001);
        inputs[0] = Fr::ONE;
        // The densities first: each aux value is drawn by its variable's B bit.
        let words = self.num_aux.div_ceil(64);
        self.fill_density(&mut w.a_aux_density[..words], A_SALT, self.a_density);
        self.fill_density(&mut w.b_aux_density[..words], B_SALT, self.b_density);
        let (drawer, b_aux) = (self.mix.drawer(), &*w.b_aux_density);
        w.aux[..self.num_aux]
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(i, chunk)| {
                let mut rng = chunk_rng(seed ^ 0x5eed_0002, i);
                for (j, x) in chunk.iter_mut().enumerate() {
                    let u = rng.next_u64();
                    let in_b = density_bit(b_aux, i * CHUNK + j);
                    *x = match drawer.draw(in_b, (u >> 32) as u32) {
                        Drawn::Zero => Fr::ZERO,
                        Drawn::One => Fr::ONE,
                        Drawn::Full => pool[u as usize % POOL],
                    };
                }
            });
        let in_words = self.num_inputs.div_ceil(64);
        for (k, word) in w.b_input_density[..in_words].iter_mut().enumerate() {
            let bits = (self.num_inputs - 64 * k).min(64);
            *word = if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
        }
        self.circuit()
    }
}

const A_SALT: u64 = 0xa5a5_0000_0000_0001;
const B_SALT: u64 = 0xb5b5_0000_0000_0002;
const CHUNK: usize = 1 << 16;
const POOL: usize = 1 << 16;

/// A well-mixed 64-bit hash (splitmix64's finalizer): cheap, stateless per index.
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn chunk_rng(seed: u64, chunk: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(splitmix64(seed ^ splitmix64(chunk as u64)))
}

/// A field element from 254 random bits (2^254 < r, so every draw is a valid value).
fn random_fr(rng: &mut ChaCha8Rng) -> Fr {
    let mut l = [0u64; 4];
    for x in &mut l {
        *x = rng.next_u64();
    }
    l[3] &= u64::MAX >> 2;
    Fr::from_u64s_le(&l).expect("below 2^254 < r")
}

/// Runs of the pool from random starting points: memcpy speed, and no two chunks alike.
fn from_pool(v: &mut [Fr], pool: &[Fr], seed: u64) {
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
        let mut at = chunk_rng(seed, i).next_u32() as usize % pool.len();
        let mut rest = chunk;
        while !rest.is_empty() {
            let n = rest.len().min(pool.len() - at);
            let (head, tail) = rest.split_at_mut(n);
            head.copy_from_slice(&pool[at..at + n]);
            rest = tail;
            at = 0;
        }
    });
}

fn fill_random(v: &mut [Fr], seed: u64) {
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
        let mut rng = chunk_rng(seed, i);
        for x in chunk {
            *x = random_fr(&mut rng);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::witness::OwnedWitness;

    #[test]
    fn witness_matches_the_srs_counts_and_the_mix() {
        let s = TINY;
        let mut w = OwnedWitness::new(s.circuit());
        let shape = s.fill_witness(7, w.buffers());
        assert_eq!(shape, s.circuit());
        let counts = s.srs_counts();
        let b = w.buffers();
        assert_eq!(
            counts[3],
            s.num_inputs + density_count(b.a_aux_density, s.num_aux)
        );
        assert_eq!(
            counts[4],
            density_count(b.b_input_density, s.num_inputs)
                + density_count(b.b_aux_density, s.num_aux)
        );
        // Densities near their targets (3,000 draws).
        let a = density_count(b.a_aux_density, s.num_aux) as f64 / s.num_aux as f64;
        let bd = density_count(b.b_aux_density, s.num_aux) as f64 / s.num_aux as f64;
        assert!((a - 0.997).abs() < 0.01, "a density {a}");
        assert!((bd - 0.254).abs() < 0.03, "b density {bd}");
        assert_eq!(b.inputs[0], Fr::ONE);
        let (aux, a_eval, a_dens) = (b.aux.to_vec(), b.a.to_vec(), b.a_aux_density.to_vec());
        // Another seed, another witness; the same densities.
        let mut w2 = OwnedWitness::new(s.circuit());
        s.fill_witness(8, w2.buffers());
        let b2 = w2.buffers();
        assert_ne!(aux, b2.aux.to_vec());
        assert_ne!(a_eval, b2.a.to_vec());
        assert_eq!(a_dens, b2.a_aux_density.to_vec());
    }

    /// The aux values of B's variables and of the others follow their own mix: 200,000
    /// draws, each fraction within 4.5 standard deviations of its target.
    #[test]
    fn aux_values_follow_the_mix_of_their_stratum() {
        for mix in [ScalarMix::PORE_32GIB, ScalarMix::ASSUMED_45_45] {
            let s = SyntheticShape {
                num_aux: 200_000,
                mix,
                ..TINY
            };
            let mut w = OwnedWitness::new(s.circuit());
            s.fill_witness(11, w.buffers());
            let b = w.buffers();
            for in_b in [true, false] {
                let vals: Vec<&Fr> = (0..s.num_aux)
                    .filter(|&i| density_bit(b.b_aux_density, i) == in_b)
                    .map(|i| &b.aux[i])
                    .collect();
                let n = vals.len() as f64;
                let f = mix.fractions(in_b);
                for (what, got, want) in [
                    (
                        "zeros",
                        vals.iter().filter(|x| bool::from(x.is_zero())).count(),
                        f.zero,
                    ),
                    (
                        "ones",
                        vals.iter().filter(|x| ***x == Fr::ONE).count(),
                        f.one,
                    ),
                    (
                        "full width",
                        vals.iter()
                            .filter(|x| !bool::from(x.is_zero()) && ***x != Fr::ONE)
                            .count(),
                        1.0 - f.zero - f.one,
                    ),
                ] {
                    let sd = (want * (1.0 - want) / n).sqrt();
                    let got = got as f64 / n;
                    assert!(
                        (got - want).abs() < 4.5 * sd,
                        "{mix:?}, in B {in_b}: {what} {got} against {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_32gib_shape_is_named_and_sized_as_upstream() {
        let s = SyntheticShape::by_name("32gib").unwrap();
        assert_eq!(s.circuit().num_constraints, 1 << 27);
        assert_eq!(SyntheticShape::by_name("tiny"), Some(TINY));
        assert_eq!(SyntheticShape::by_name("64GiB"), None);
    }
}
