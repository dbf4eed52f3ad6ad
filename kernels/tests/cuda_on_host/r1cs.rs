//! a = A·z and b = B·z from a recorded R1CS built for the host (cuda_on_host.rs): r1cs.cu's
//! r1cs_eval as `r1cs_eval::eval_on_device` launches it, against synthesis's a and b (the
//! chain circuit, whole and as a prefix and one block), against its CPU reference
//! `DeviceForm::row` on random z over a stretched layout, and its a·b = c check finding the
//! first row a changed coefficient breaks.

use blstrs::Scalar as Fr;
use cuzk_kernels::cuda::r1cs_eval::R1csLayout;
use cuzk_kernels::msm::scalars::{to_limbs, to_limbs_vec, Limbs};
use cuzk_kernels::witness::device_form::DeviceForm;
use cuzk_kernels::witness::{
    synthesize_into, BlockLayout, CValues, CircuitShape, OwnedWitness, R1cs, Recorded, Which,
};
use ff::Field;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::chain_circuit::chain;
use super::{build, record, run};

fn layout(seed: u64, blocks: usize) -> BlockLayout {
    BlockLayout::measure(chain(seed, 0..0, false), chain(seed, 0..1, false), blocks).unwrap()
}

fn recorded_block(seed: u64) -> Recorded {
    Recorded::record(chain(seed, 0..1, false), Which::ALL).unwrap()
}

/// The driver's op 25 record for `form` at `z` over 2^log_n.
fn input(form: &DeviceForm, z: &[Limbs], log_n: u32, check: bool) -> Vec<u8> {
    let mut v = record(25, 1 << log_n);
    for m in &form.m {
        for count in [m.start.len(), m.ent.len(), m.coeff.len()] {
            v.extend((count as u32).to_le_bytes());
        }
    }
    let words = |v: &mut Vec<u8>, w: &mut dyn Iterator<Item = u32>| {
        for x in w {
            v.extend(x.to_le_bytes());
        }
    };
    let limbs = |v: &mut Vec<u8>, l: &[Limbs]| {
        for x in l.iter().flatten() {
            v.extend(x.to_le_bytes());
        }
    };
    for m in &form.m {
        words(&mut v, &mut m.start.iter().copied());
        words(&mut v, &mut m.ent.iter().flatten().copied());
        limbs(&mut v, &m.coeff);
        words(&mut v, &mut m.kind.iter().copied());
    }
    v.extend(R1csLayout::new(form, log_n).unwrap().to_bytes());
    v.extend((z.len() as u32).to_le_bytes());
    limbs(&mut v, z);
    v.extend((check as u32).to_le_bytes());
    let in_block = form.long.len() - form.long_in_prefix;
    for x in [form.long_in_prefix, in_block] {
        v.extend((x as u32).to_le_bytes());
    }
    words(&mut v, &mut form.long.iter().copied());
    v
}

/// The driver's a, b (the Fr whose Montgomery limbs it wrote) and first unsatisfied row.
fn output(out: &[u8], n: usize) -> (Vec<Fr>, Vec<Fr>, Option<usize>) {
    assert_eq!(out.len(), 2 * n * 32 + 4);
    let fr = |i: usize| {
        let l: Limbs = std::array::from_fn(|k| {
            u64::from_le_bytes(out[32 * i + 8 * k..32 * i + 8 * k + 8].try_into().unwrap())
        });
        Fr::from(blst::blst_fr { l })
    };
    let bad = u32::from_le_bytes(out[2 * n * 32..].try_into().unwrap());
    (
        (0..n).map(fr).collect(),
        (n..2 * n).map(fr).collect(),
        (bad != u32::MAX).then_some(bad as usize),
    )
}

/// The chain circuit's witness: its shape, z (canonical) and synthesis's a, b.
fn witness(seed: u64, blocks: usize) -> (CircuitShape, Vec<Limbs>, Vec<Fr>, Vec<Fr>) {
    let shape = CircuitShape::of(chain(seed, 0..blocks, false)).unwrap();
    let mut w = OwnedWitness::new(shape);
    let b = w.buffers();
    let shape =
        synthesize_into(chain(seed, 0..blocks, false), &shape, b, CValues::Written).unwrap();
    let b = w.buffers();
    let mut z = to_limbs_vec(&b.inputs[..shape.num_inputs]);
    z.extend(to_limbs_vec(&b.aux[..shape.num_aux]));
    let n = shape.domain_size();
    (shape, z, b.a[..n].to_vec(), b.b[..n].to_vec())
}

#[test]
fn r1cs_eval_built_for_the_host_gives_synthesis_a_and_b() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    for blocks in [2usize, 5, 12] {
        let seed = 40 + blocks as u64;
        let (shape, z, want_a, want_b) = witness(seed, blocks);
        let log_n = shape.domain_log2();
        let whole =
            R1cs::whole(Recorded::record(chain(seed, 0..blocks, false), Which::ALL).unwrap());
        let by_block = R1cs::blocks(recorded_block(seed), layout(seed, blocks)).unwrap();
        for (name, r1cs) in [("whole", whole), ("prefix and one block", by_block)] {
            let form = r1cs.device_form();
            // Each block's packed number is a long row: r1cs_eval_long makes it.
            assert!(!form.long.is_empty(), "{name}: long rows");
            let out = run(&exe, dir.path(), &input(&form, &z, log_n, true));
            let (a, b, bad) = output(&out, 1 << log_n);
            assert_eq!(bad, None, "{name}, {blocks} blocks: every row holds");
            assert!(a == want_a, "{name}, {blocks} blocks: a");
            assert!(b == want_b, "{name}, {blocks} blocks: b");
        }
    }
}

/// A two-block recording stretched to 300 blocks over random z (no witness satisfies it,
/// so unchecked): every row equal to the CPU reference, input rows and zeros included.
#[test]
fn r1cs_eval_built_for_the_host_matches_the_reference_on_a_stretched_layout() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let mut rng = ChaCha8Rng::seed_from_u64(0x71c5);
    let mut form = R1cs::blocks(recorded_block(8), layout(8, 2))
        .unwrap()
        .device_form();
    form.layout.blocks = 300;
    let (n_in, n_aux) = form.vars();
    let z: Vec<Limbs> = (0..n_in + n_aux)
        .map(|i| match i % 7 {
            0 => to_limbs(&Fr::ZERO),
            1 => to_limbs(&Fr::ONE),
            2 => to_limbs(&-Fr::ONE),
            _ => to_limbs(&Fr::random(&mut rng)),
        })
        .collect();
    let log_n = form.layout.shape().domain_log2();
    let out = run(&exe, dir.path(), &input(&form, &z, log_n, false));
    let n = 1usize << log_n;
    let (a, b, bad) = output(&out, n);
    assert_eq!(bad, None, "unchecked");
    for g in 0..n {
        let [ra, rb, _] = form.row(g, &z);
        assert_eq!((a[g], b[g]), (ra, rb), "row {g} of {n}");
    }
}

/// A's coefficient 3 changed to 4 (every block's `d = c + bit` row): the check names the
/// first row that uses it.
#[test]
fn r1cs_eval_built_for_the_host_finds_the_first_unsatisfied_row() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let (seed, blocks) = (5, 6);
    let (shape, z, _, _) = witness(seed, blocks);
    let mut m = recorded_block(seed);
    let i =
        m.a.coeffs
            .iter()
            .position(|c| *c == Fr::from(3u64))
            .unwrap();
    m.a.coeffs[i] = Fr::from(4u64);
    let first_row =
        m.a.entries
            .iter()
            .find(|e| e.coeff as usize == i)
            .unwrap()
            .row;
    let form = R1cs::blocks(m, layout(seed, blocks)).unwrap().device_form();
    let log_n = shape.domain_log2();
    let out = run(&exe, dir.path(), &input(&form, &z, log_n, true));
    let (_, _, bad) = output(&out, 1 << log_n);
    assert_eq!(bad, Some(first_row as usize));
}
