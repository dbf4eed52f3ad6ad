//! Upstream panics on a malformed C1, caught as its partition's error.
//!
//! storage-proofs-porep rejects vanilla proofs of the wrong shape by panicking, not by an
//! error: `StackedCompound::circuit` indexes `labeling_proofs[0]`, the circuit's synthesis
//! asserts on its columns (`stacked/circuit/params.rs`). Such a C1 parses and is admitted,
//! and the C1's data is the only thing that differs between jobs: a panic there is that
//! job's fault. Caught (the release profile unwinds), it fails the job and the process goes
//! on serving the others; uncaught, it killed the process, and the restarted one took the
//! same partition again, for ever. Only what is dropped with the failed partition (its
//! circuit, its buffers) is left mid-way, hence `AssertUnwindSafe`.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use bellperson::{Circuit, ConstraintSystem};
use blstrs::Scalar as Fr;

/// `f`'s value, or its panic's message.
pub(crate) fn caught<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| message(&*payload))
}

/// A panic's message: `panic!` and `assert!` give a `&str` or a `String`.
fn message(payload: &(dyn Any + Send)) -> String {
    match (
        payload.downcast_ref::<&str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(s), _) => s.to_string(),
        (_, Some(s)) => s.clone(),
        _ => "a panic without a message".to_string(),
    }
}

/// A circuit whose synthesis panicking is an error, the panic's message kept in `panicked`
/// (the first one's), for a run of challenges synthesized on a thread of its own:
/// `cuzk_kernels::witness::blocks` joins its threads with `expect`, and a panic crossing it
/// reaches the caller only as "a synthesis thread panicked".
pub(crate) struct Caught<'p, C> {
    pub circuit: C,
    pub panicked: &'p OnceLock<String>,
}

impl<C: Circuit<Fr>> Circuit<Fr> for Caught<'_, C> {
    fn synthesize<CS: ConstraintSystem<Fr>>(
        self,
        cs: &mut CS,
    ) -> Result<(), bellperson::SynthesisError> {
        let Caught { circuit, panicked } = self;
        caught(|| circuit.synthesize(cs)).unwrap_or_else(|message| {
            let _ = panicked.set(message);
            // Any error ends the run; the caller reports `panicked` instead.
            Err(bellperson::SynthesisError::AssignmentMissing)
        })
    }
}
