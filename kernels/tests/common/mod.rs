pub mod circuits;

use bellperson::groth16::{self as bp, Parameters};
use bellperson::Circuit;
use blstrs::{Bls12, Scalar as Fr};
use cuzk_kernels::srs::{Srs, Validation};
use rand_chacha::ChaCha8Rng;

/// Params through a real file: bellperson writes them, we read them back.
#[allow(dead_code)] // not every test file that shares `common` proves
pub fn params_via_file<C: Circuit<Fr> + Clone>(
    circuit: &C,
    rng: &mut ChaCha8Rng,
) -> (Parameters<Bls12>, Srs) {
    let params = bp::generate_random_parameters::<Bls12, _, _>(circuit.clone(), rng).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("test.params");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    params.write(&mut f).unwrap();
    drop(f);
    let srs = Srs::read(&path, Validation::Full).unwrap();
    (params, srs)
}
