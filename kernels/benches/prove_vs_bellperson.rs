//! Our CPU prover against bellperson's `create_proof` on the same circuit, parameters,
//! r and s, in one run: a chain of SHA-256 compressions near 2^20 constraints.
//!
//!     cargo bench -p cuzk-kernels --bench prove_vs_bellperson
//!
//! Parameters are generated once (minutes) into $CUZK_BENCH_PARAMS
//! (default /var/tmp/cuzk-bench-params) and reused.

#[path = "../tests/common/circuits.rs"]
mod circuits;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bellperson::groth16::{self as bp, Parameters};
use blstrs::{Bls12, Scalar as Fr};
use circuits::ShaChain;
use cuzk_kernels::groth16;
use cuzk_kernels::srs::{Srs, Validation};
use cuzk_kernels::witness::{synthesize_into, CValues, CircuitShape, OwnedWitness};
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const TARGET_LOG2: u32 = 20;

fn params_path(rounds: usize) -> PathBuf {
    let dir = std::env::var_os("CUZK_BENCH_PARAMS")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/var/tmp/cuzk-bench-params".into());
    std::fs::create_dir_all(&dir).expect("create bench params dir");
    dir.join(format!("sha-chain-{rounds}.params"))
}

fn main() {
    // As many rounds as fit in a 2^20 domain (with the input constraints).
    let per_round = CircuitShape::of(ShaChain {
        preimage: [0; 32],
        rounds: 2,
    })
    .unwrap()
    .num_constraints
        - CircuitShape::of(ShaChain {
            preimage: [0; 32],
            rounds: 1,
        })
        .unwrap()
        .num_constraints;
    let base = CircuitShape::of(ShaChain {
        preimage: [0; 32],
        rounds: 0,
    })
    .unwrap()
    .num_constraints;
    let rounds = ((1usize << TARGET_LOG2) - base) / per_round;
    let circuit = ShaChain {
        preimage: *b"cuzk benchmark preimage 32 bytes",
        rounds,
    };
    let shape = CircuitShape::of(circuit.clone()).unwrap();
    println!(
        "circuit: {rounds} chained SHA-256 compressions, {} constraints (domain 2^{}), {} aux",
        shape.num_constraints,
        shape.domain_log2(),
        shape.num_aux
    );

    let path = params_path(rounds);
    if !path.exists() {
        println!(
            "generating random parameters into {} (one time; minutes) ...",
            path.display()
        );
        let t = Instant::now();
        let mut rng = ChaCha8Rng::seed_from_u64(rounds as u64);
        let p = bp::generate_random_parameters::<Bls12, _, _>(circuit.clone(), &mut rng).unwrap();
        let tmp = path.with_extension("tmp");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp).unwrap());
        p.write(&mut f).unwrap();
        drop(f);
        std::fs::rename(&tmp, &path).unwrap();
        println!("  generated in {:.1} s", t.elapsed().as_secs_f64());
    }
    let t = Instant::now();
    let bp_params = Parameters::<Bls12>::read(
        std::fs::File::open(&path)
            .map(std::io::BufReader::new)
            .unwrap(),
        false,
    )
    .unwrap();
    let bp_load = t.elapsed();
    let t = Instant::now();
    let srs = Srs::read(&path, Validation::Trusted).unwrap();
    let our_load = t.elapsed();
    println!(
        "parameter load (not in the timings below): bellperson {:.2} s, cuzk {:.2} s",
        bp_load.as_secs_f64(),
        our_load.as_secs_f64()
    );

    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let runs = std::env::var("CUZK_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let (mut ours, mut theirs) = (vec![], vec![]);
    for run in 0..runs {
        // bellperson: synthesis + prover in one call.
        let t = Instant::now();
        let bp_proof = bp::create_proof::<Bls12, _, _>(circuit.clone(), &bp_params, r, s).unwrap();
        let bp_time = t.elapsed();
        let mut bp_bytes = vec![];
        bp_proof.write(&mut bp_bytes).unwrap();

        // cuzk: synthesis into our buffers + our prover.
        let t = Instant::now();
        let mut w = OwnedWitness::new(shape);
        let shape =
            synthesize_into(circuit.clone(), &shape, w.buffers(), CValues::Written).unwrap();
        let synth = t.elapsed();
        let (proof, timings) = groth16::prove(&srs, &shape, w.buffers(), r, s).unwrap();
        let our_time = t.elapsed();
        assert_eq!(proof.to_bytes().to_vec(), bp_bytes, "proofs differ");

        println!(
            "run {run}: bellperson {:.2} s | cuzk {:.2} s (synthesis {:.2}, H {:.2}, prep {:.2}, msm h {:.2} l {:.2} a {:.2} b_g1 {:.2} b_g2 {:.2}) | proofs identical",
            bp_time.as_secs_f64(),
            our_time.as_secs_f64(),
            synth.as_secs_f64(),
            timings.quotient.as_secs_f64(),
            timings.prep.as_secs_f64(),
            timings.msm_h.as_secs_f64(),
            timings.msm_l.as_secs_f64(),
            timings.msm_a.as_secs_f64(),
            timings.msm_b_g1.as_secs_f64(),
            timings.msm_b_g2.as_secs_f64(),
        );
        theirs.push(bp_time);
        ours.push(our_time);
    }
    let best = |v: &[Duration]| v.iter().min().unwrap().as_secs_f64();
    println!(
        "\nbest of {runs}: bellperson {:.2} s, cuzk {:.2} s, speedup {:.2}x ({} threads)",
        best(&theirs),
        best(&ours),
        best(&theirs) / best(&ours),
        rayon::current_num_threads()
    );
}
