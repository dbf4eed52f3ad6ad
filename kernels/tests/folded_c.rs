//! C folded into L (`groth16::folded`): C recorded from a circuit equals the c its witness
//! gives, and ΣH + ΣL from LC, L' = L − Cᵀ·LD' and Q_inputs equals the C of bellperson's
//! own proof with r = s = 0 (C = ΣH + ΣL + s·ΣA + r·ΣB + r·s·δ + s·α + r·β).

mod common;

use bellperson::gadgets::num::AllocatedNum;
use bellperson::groth16 as bp;
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::{Bls12, G1Projective, Scalar as Fr};
use common::circuits::{PowerChain, ShaChain};
use common::params_via_file;
use cuzk_kernels::groth16::folded::{inputs_q_sum, FoldedBases};
use cuzk_kernels::msm::scalars::to_limbs;
use cuzk_kernels::witness::matrix::R1csMatrix;
use cuzk_kernels::witness::{synthesize_into, CValues, CircuitShape, OwnedWitness};
use ff::{Field, PrimeField};
use group::Curve;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// C rows with every kind of coefficient the fold treats apart (1, −1, small of either
/// sign, powers of two, wide), on inputs (ONE included) and aux, a variable in several
/// rows, and rows with an empty C. Each `1 · T = T` holds for any values.
#[derive(Clone)]
struct CMix {
    pub input: Fr,
    pub values: Vec<Fr>,
}

impl Circuit<Fr> for CMix {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc_input(|| "x", || Ok(self.input))?;
        let vars = self
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| AllocatedNum::alloc(cs.namespace(|| format!("v{i}")), || Ok(*v)))
            .collect::<Result<Vec<_>, _>>()?;
        let wide = Fr::from_str_vartime("1234567890123456789012345678901234567890").unwrap();
        let coeffs = [
            Fr::ONE,
            -Fr::ONE,
            Fr::from(2u64),
            Fr::from(1u64 << 40),
            -Fr::from(12345u64),
            Fr::from(u64::MAX),
            wide,
            -wide,
        ];
        for (i, v) in vars.iter().enumerate() {
            let j = (i * 7 + 3) % vars.len();
            let (c0, c1, c2) = (coeffs[i % 8], coeffs[(i / 8) % 8], coeffs[(i + 3) % 8]);
            let t = |lc: bellperson::LinearCombination<Fr>| {
                lc + (c0, v.get_variable()) + (c1, vars[j].get_variable()) + (c2, x)
            };
            cs.enforce(|| format!("row {i}"), |lc| lc + CS::one(), t, t);
            // A row whose C is empty (v·0 = 0) and one whose C is ONE alone (1·1 = 1).
            cs.enforce(
                || format!("empty {i}"),
                |lc| lc + v.get_variable(),
                |lc| lc,
                |lc| lc,
            );
            if i % 5 == 0 {
                cs.enforce(
                    || format!("one {i}"),
                    |lc| lc + CS::one(),
                    |lc| lc + CS::one(),
                    |lc| lc + (coeffs[i % 8], CS::one()) - (coeffs[i % 8] - Fr::ONE, CS::one()),
                );
            }
        }
        Ok(())
    }
}

/// Records C, checks C·z against the witness's c, and ΣH + ΣL of the folded form against
/// bellperson's C with r = s = 0.
fn check<C: Circuit<Fr> + Clone + Send>(circuit: C, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (params, srs) = params_via_file(&circuit, &mut rng);
    let shape = CircuitShape::of(circuit.clone()).unwrap();
    let mut w = OwnedWitness::new(shape);
    let shape = synthesize_into(circuit.clone(), &shape, w.buffers(), CValues::Written).unwrap();
    let bufs = w.buffers();
    let (inputs, aux) = (&bufs.inputs[..shape.num_inputs], &bufs.aux[..shape.num_aux]);

    let cm = R1csMatrix::record_c(circuit.clone()).unwrap();
    assert_eq!(
        (cm.num_inputs, cm.num_aux),
        (shape.num_inputs, shape.num_aux)
    );
    let c = cm.apply(inputs, aux);
    assert_eq!(&c[..], &bufs.c[..cm.rows], "C·z equals the witness's c");
    assert!(
        bufs.c[cm.rows..].iter().all(|v| v.is_zero_vartime()),
        "rows past C's are 0"
    );

    let log_n = shape.domain_log2();
    let folded = FoldedBases::new(&srs.h, &srs.l, &cm, log_n);
    let got = folded.h_plus_l(bufs.a, bufs.b, inputs, aux).to_affine();
    // The inputs' part as the GPU prover takes it (Pippenger over canonical scalars).
    let z_in: Vec<_> = inputs.iter().map(to_limbs).collect();
    let plain: G1Projective = inputs
        .iter()
        .zip(&folded.q_inputs)
        .map(|(z, q)| G1Projective::from(q) * z)
        .sum();
    assert_eq!(inputs_q_sum(&folded.q_inputs, &z_in).unwrap(), plain);
    assert!(inputs_q_sum(&folded.q_inputs, &z_in[1..]).is_err());
    let theirs = bp::create_proof::<Bls12, _, _>(circuit, &params, Fr::ZERO, Fr::ZERO).unwrap();
    assert_eq!(
        got, theirs.c,
        "ΣH + ΣL by the folded form equals bellperson's C at r = s = 0"
    );
}

#[test]
fn every_kind_of_coefficient_folds_into_l() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let values = (0..150).map(|_| Fr::random(&mut rng)).collect();
    check(
        CMix {
            input: Fr::random(&mut rng),
            values,
        },
        2,
    );
}

#[test]
fn power_chain_with_public_inputs_folds_into_l() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    check(
        PowerChain {
            x: Fr::random(&mut rng),
            ks: (0..100).map(|_| Fr::random(&mut rng)).collect(),
            public: true,
            corrupt: false,
        },
        4,
    );
}

#[test]
fn stats_count_what_c_holds() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let values: Vec<Fr> = (0..16).map(|_| Fr::random(&mut rng)).collect();
    let cm = R1csMatrix::record_c(CMix {
        input: Fr::ONE,
        values,
    })
    .unwrap();
    let s = cm.stats();
    // 16 mixed rows, 16 empty ones, 4 rows of ONE (i = 0, 5, 10, 15).
    assert_eq!(s.rows, 36);
    assert_eq!(s.empty_rows, 16);
    assert_eq!(s.entries, s.ones + s.minus_ones + s.small + s.wide);
    assert!(s.ones > 0 && s.minus_ones > 0 && s.small > 0 && s.wide > 0);
}

/// Synthesis without C writes everything else exactly as with it (a, b, the assignment, the
/// densities) and leaves c as it found it; C·z from the recorded C is then the c the full
/// synthesis writes.
#[test]
fn synthesis_without_c_writes_all_else_the_same() {
    let circuit = ShaChain {
        preimage: [3u8; 32],
        rounds: 1,
    };
    let shape = CircuitShape::of(circuit.clone()).unwrap();
    let mut full = OwnedWitness::new(shape);
    synthesize_into(circuit.clone(), &shape, full.buffers(), CValues::Written).unwrap();
    let mut part = OwnedWitness::new(shape);
    let sentinel = Fr::from(77u64);
    part.buffers().c.fill(sentinel);
    let got = synthesize_into(circuit.clone(), &shape, part.buffers(), CValues::LeftOut).unwrap();
    assert_eq!(got, shape);
    let (f, p) = (full.buffers(), part.buffers());
    assert_eq!(f.a, p.a);
    assert_eq!(f.b, p.b);
    assert_eq!(f.inputs, p.inputs);
    assert_eq!(f.aux, p.aux);
    assert_eq!(f.a_aux_density, p.a_aux_density);
    assert_eq!(f.b_aux_density, p.b_aux_density);
    assert_eq!(f.b_input_density, p.b_input_density);
    assert!(p.c.iter().all(|v| *v == sentinel), "c left as it was");
    let cm = R1csMatrix::record_c(circuit).unwrap();
    let c = cm.apply(&p.inputs[..shape.num_inputs], &p.aux[..shape.num_aux]);
    assert_eq!(&c[..], &f.c[..cm.rows]);
}
