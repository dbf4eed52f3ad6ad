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

use crate::witness::{density_count, CircuitShape, WitnessBuffers};

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
    /// Fractions of aux values equal to 0 and to 1 (the rest full width).
    pub zeros: f64,
    pub ones: f64,
}

/// A 32 GiB PoRep partition (FIELD-NOTES.md): domain 2^27, 328 inputs, 130,169,893 aux,
/// aux density 99.7 % in A and 25.4 % in B. The scalar mix (45 % zeros, 45 % ones) is an
/// assumption: PoRep witnesses are mostly bits.
pub const PORE_32GIB: SyntheticShape = SyntheticShape {
    name: "32GiB",
    domain_log2: 27,
    num_inputs: 328,
    num_aux: 130_169_893,
    a_density: 0.997,
    b_density: 0.254,
    zeros: 0.45,
    ones: 0.45,
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
    /// random; aux 0 / 1 / random by the mix; the fixed densities.
    ///
    /// "Random" values are drawn from a pool of 2^16 random elements of this seed: the
    /// NTTs' and the MSMs' work does not depend on the values, and copying from a pool
    /// keeps a 32 GiB partition's 17 GB to seconds of a few cores instead of a minute.
    pub fn fill_witness(&self, seed: u64, w: WitnessBuffers<'_>) -> CircuitShape {
        let mut pool = vec![Fr::ZERO; POOL];
        fill_random(&mut pool, seed);
        let n = 1usize << self.domain_log2;
        for (v, k) in [(&mut *w.a, 1u64), (&mut *w.b, 2), (&mut *w.c, 3)] {
            from_pool(&mut v[..n], &pool, seed.wrapping_add(k));
        }
        let inputs = &mut w.inputs[..self.num_inputs];
        from_pool(inputs, &pool, seed ^ 0x5eed_0001);
        inputs[0] = Fr::ONE;
        let (zero_below, one_below) = (
            (self.zeros * (1u64 << 32) as f64) as u64,
            ((self.zeros + self.ones) * (1u64 << 32) as f64) as u64,
        );
        w.aux[..self.num_aux]
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(i, chunk)| {
                let mut rng = chunk_rng(seed ^ 0x5eed_0002, i);
                for x in chunk {
                    let u = rng.next_u64();
                    let class = u >> 32;
                    *x = if class < zero_below {
                        Fr::ZERO
                    } else if class < one_below {
                        Fr::ONE
                    } else {
                        pool[u as usize % POOL]
                    };
                }
            });
        let words = self.num_aux.div_ceil(64);
        self.fill_density(&mut w.a_aux_density[..words], A_SALT, self.a_density);
        self.fill_density(&mut w.b_aux_density[..words], B_SALT, self.b_density);
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
        let zeros = b.aux.iter().filter(|x| bool::from(x.is_zero())).count() as f64;
        let ones = b.aux.iter().filter(|x| **x == Fr::ONE).count() as f64;
        let n = s.num_aux as f64;
        assert!((zeros / n - 0.45).abs() < 0.03, "zeros {zeros}");
        assert!((ones / n - 0.45).abs() < 0.03, "ones {ones}");
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

    #[test]
    fn the_32gib_shape_is_named_and_sized_as_upstream() {
        let s = SyntheticShape::by_name("32gib").unwrap();
        assert_eq!(s.circuit().num_constraints, 1 << 27);
        assert_eq!(SyntheticShape::by_name("tiny"), Some(TINY));
        assert_eq!(SyntheticShape::by_name("64GiB"), None);
    }
}
