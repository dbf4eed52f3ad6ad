//! a = A·z and b = B·z on the device from a recorded R1CS (kernels/cuda/r1cs.cu; the form
//! and its CPU reference: `witness::device_form`), with every row's a·b = C·z checked.
//!
//! A prover holds the form of the recorded R1CS set here ([`set_r1cs_form`]) and makes a
//! partition's a and b from it after its scalars land (`Evals::FromR1cs`): synthesis then
//! writes only the assignment (docs/gpu.md "a and b from the recorded R1CS").
//! [`eval_on_device`] measures the same kernels on their own (`cuzk bench r1cs-device`),
//! with a context and allocation of their own, so it runs beside no prover.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use blstrs::Scalar as Fr;
use cudarc::driver::sys::CUdeviceptr;

use super::device::{self, args, DevBuf, Device};
use super::layout::FR_BYTES;
use super::GpuError;
use crate::msm::scalars::Limbs;
use crate::witness::device_form::{DeviceForm, DeviceMatrix};

static R1CS_FORM: Mutex<Option<Arc<DeviceForm>>> = Mutex::new(None);

/// The recorded R1CS provers made from now on hold, to make a and b of `Evals::FromR1cs`
/// partitions (None: they hold none).
pub fn set_r1cs_form(form: Option<Arc<DeviceForm>>) {
    *R1CS_FORM.lock().unwrap_or_else(|e| e.into_inner()) = form;
}

pub(crate) fn r1cs_form() -> Option<Arc<DeviceForm>> {
    R1CS_FORM.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Threads a block (r1cs.cu R1CS_THREADS): a thread a row.
const THREADS: u32 = 256;

/// r1cs.cu `R1csMat`.
#[repr(C)]
#[derive(Clone, Copy)]
struct R1csMat {
    start: CUdeviceptr,
    ent: CUdeviceptr,
    coeff: CUdeviceptr,
    kind: CUdeviceptr,
}

/// r1cs.cu `R1csLayout`: where the whole circuit's rows and variables lie.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct R1csLayout {
    p_rows: u32,
    b_rows: u32,
    blocks: u32,
    p_inputs: u32,
    b_inputs: u32,
    p_aux: u32,
    b_aux: u32,
    n_inputs: u32,
    rows: u32,
    n: u32,
    r2: [u32; 8],
}
const _: () = assert!(std::mem::size_of::<R1csLayout>() == 72);

impl R1csLayout {
    /// `form`'s layout over the domain 2^log_n; refused where its rows and input rows do
    /// not fit the domain.
    pub fn new(form: &DeviceForm, log_n: u32) -> Result<R1csLayout, GpuError> {
        Self::of(&form.layout, form.r2, form.rows(), form.vars().0, log_n)
    }

    /// The layout of a form's circuit (`layout`, its `rows` recorded rows and `n_in` input
    /// rows) over the domain 2^log_n.
    fn of(
        layout: &crate::witness::BlockLayout,
        r2: Limbs,
        rows: usize,
        n_in: usize,
        log_n: u32,
    ) -> Result<R1csLayout, GpuError> {
        let n = 1usize << log_n;
        if rows + n_in > n || n > u32::MAX as usize {
            return Err(GpuError::Input(format!(
                "{rows} rows and {n_in} input rows do not fit a domain of 2^{log_n}"
            )));
        }
        let (p, b) = (layout.prefix, layout.block);
        Ok(R1csLayout {
            p_rows: p.constraints as u32,
            b_rows: b.constraints as u32,
            blocks: layout.blocks as u32,
            p_inputs: p.inputs as u32,
            b_inputs: b.inputs as u32,
            p_aux: p.aux as u32,
            b_aux: b.aux as u32,
            n_inputs: n_in as u32,
            rows: rows as u32,
            n: n as u32,
            r2: std::array::from_fn(|i| (r2[i / 2] >> (32 * (i % 2))) as u32),
        })
    }

    /// The bytes the kernel reads as its parameter (for the host build's driver).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut words = vec![
            self.p_rows,
            self.b_rows,
            self.blocks,
            self.p_inputs,
            self.b_inputs,
            self.p_aux,
            self.b_aux,
            self.n_inputs,
            self.rows,
            self.n,
        ];
        words.extend(self.r2);
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// What one evaluation gave: a and b over the domain (Montgomery, as synthesis writes
/// them), the first recorded row whose a·b ≠ C·z (with the check), and the times.
pub struct R1csEval {
    pub a: Vec<Fr>,
    pub b: Vec<Fr>,
    pub unsatisfied: Option<usize>,
    /// The form and z to the device (pageable memory).
    pub upload: Duration,
    /// Both kernels, each run (device events).
    pub runs: Vec<Duration>,
    /// Of each run, the long rows' kernel.
    pub long: Vec<Duration>,
}

/// Evaluates `form` at `z` (canonical, inputs then aux) over the domain 2^log_n on device
/// `ordinal`, `runs` times (a and b of the last read back), with the a·b = C·z check of
/// every recorded row when `check`.
pub fn eval_on_device(
    ordinal: usize,
    form: &DeviceForm,
    z: &[Limbs],
    log_n: u32,
    check: bool,
    runs: usize,
) -> Result<R1csEval, GpuError> {
    let n = 1usize << log_n;
    let mut dev = device::open(ordinal)?;
    dev.allocate(ResidentForm::bytes(form) + (z.len() + 2 * n) * FR_BYTES + 3 * 256)?;
    let ks = dev.compute;
    let started = Instant::now();
    let resident = ResidentForm::upload(&mut dev, form)?;
    let z_buf = dev.carve(size_of_val(z));
    dev.upload(z_buf.ptr, z_buf.bytes, z, ks)?;
    let a_buf = dev.carve(n * FR_BYTES);
    let b_buf = dev.carve(n * FR_BYTES);
    dev.sync(ks)?;
    let upload = started.elapsed();
    let (start, mid, end) = (dev.event()?, dev.event()?, dev.event()?);
    let mut times = Vec::new();
    let mut long_times = Vec::new();
    for _ in 0..runs.max(1) {
        start.record(ks)?;
        let at = EvalAt {
            log_n,
            z: (z_buf.ptr, z.len()),
            a: a_buf.ptr,
            b: b_buf.ptr,
            check,
        };
        resident.enqueue(&dev, &at, ks, Some(&mid))?;
        end.record(ks)?;
        dev.sync(ks)?;
        let secs = |a: &device::Event, b| -> Result<Duration, GpuError> {
            Ok(Duration::from_secs_f64(a.ms_to(b)? as f64 / 1e3))
        };
        times.push(secs(&start, &end)?);
        long_times.push(secs(&mid, &end)?);
    }
    let mut a = vec![Fr::default(); n];
    let mut bv = vec![Fr::default(); n];
    dev.download(&mut a, a_buf.ptr, ks)?;
    dev.download(&mut bv, b_buf.ptr, ks)?;
    let unsatisfied = resident.unsatisfied(&dev, ks)?;
    Ok(R1csEval {
        a,
        b: bv,
        unsatisfied,
        upload,
        runs: times,
        long: long_times,
    })
}

/// Where one evaluation reads and writes: z (device pointer and its length: inputs then
/// aux, canonical), a and b (2^log_n Fr each, Montgomery), and whether every recorded
/// row's a·b = C·z is checked.
pub(crate) struct EvalAt {
    pub log_n: u32,
    pub z: (CUdeviceptr, usize),
    pub a: CUdeviceptr,
    pub b: CUdeviceptr,
    pub check: bool,
}

/// A recorded R1CS on the device (carved from the caller's allocation: a prover's, which
/// keeps it for every partition of its proof type, or an evaluation's own), and the word
/// the check writes its first unsatisfied row to.
pub(crate) struct ResidentForm {
    mats: [R1csMat; 3],
    long: CUdeviceptr,
    bad: CUdeviceptr,
    n_prefix: u32,
    n_block: u32,
    /// `R1csLayout::new` of each domain asked for is a function of these.
    layout: crate::witness::BlockLayout,
    r2: Limbs,
    rows: usize,
    vars: (usize, usize),
}

/// The bad word's value while every row holds.
static ALL_HOLD: [u32; 1] = [u32::MAX];

impl ResidentForm {
    /// Device bytes `upload` carves for `form` (each region 256-byte aligned).
    pub(crate) fn bytes(form: &DeviceForm) -> usize {
        let aligned = |b: usize| b.max(4).next_multiple_of(256);
        let matrix = |m: &DeviceMatrix| {
            aligned(m.start.len() * 4)
                + aligned(m.ent.len() * 8)
                + aligned(m.coeff.len() * FR_BYTES)
                + aligned(m.kind.len() * 4)
        };
        form.m.iter().map(matrix).sum::<usize>() + aligned(form.long.len() * 4) + aligned(4)
    }

    /// Carves `bytes(form)` from `dev`'s allocation and uploads the form on the compute
    /// stream (from pageable memory: once per proof type).
    pub(crate) fn upload(dev: &mut Device, form: &DeviceForm) -> Result<ResidentForm, GpuError> {
        let mut mats = [R1csMat {
            start: 0,
            ent: 0,
            coeff: 0,
            kind: 0,
        }; 3];
        for (m, out) in form.m.iter().zip(&mut mats) {
            *out = R1csMat {
                start: put(dev, &m.start)?,
                ent: put(dev, &m.ent)?,
                coeff: put(dev, &m.coeff)?,
                kind: put(dev, &m.kind)?,
            };
        }
        let long = put(dev, &form.long)?;
        let bad = put(dev, &ALL_HOLD)?;
        dev.sync(dev.compute)?;
        Ok(ResidentForm {
            mats,
            long,
            bad,
            n_prefix: form.long_in_prefix as u32,
            n_block: (form.long.len() - form.long_in_prefix) as u32,
            layout: form.layout,
            r2: form.r2,
            rows: form.rows(),
            vars: form.vars(),
        })
    }

    /// Inputs (ONE included) and aux variables of the recorded circuit.
    pub(crate) fn vars(&self) -> (usize, usize) {
        self.vars
    }

    /// Enqueues a = A·z and b = B·z (the bad word reset first, so with the check it ends
    /// holding the first recorded row whose a·b ≠ C·z, else u32::MAX) on `stream`; `mid`
    /// is recorded between the short rows' kernel and the long rows'.
    pub(crate) fn enqueue(
        &self,
        dev: &Device,
        at: &EvalAt,
        stream: cudarc::driver::sys::CUstream,
        mid: Option<&device::Event>,
    ) -> Result<(), GpuError> {
        let (n_in, n_aux) = self.vars;
        if at.z.1 != n_in + n_aux {
            return Err(GpuError::Input(format!(
                "z has {} values, the recorded circuit {n_in} inputs and {n_aux} aux variables",
                at.z.1
            )));
        }
        let layout = R1csLayout::of(&self.layout, self.r2, self.rows, n_in, at.log_n)?;
        let n = 1usize << at.log_n;
        dev.upload(self.bad, 4, &ALL_HOLD, stream)?;
        let (mats, check, bad, long) = (self.mats, at.check as u32, self.bad, self.long);
        let (z, a, b) = (at.z.0, at.a, at.b);
        let (n_prefix, n_block) = (self.n_prefix, self.n_block);
        let instances = n_prefix as usize + n_block as usize * self.layout.blocks;
        // SAFETY: r1cs_eval(ma, mb, mc, layout, z, a, b, check, bad) and r1cs_eval_long(the
        // same, long_rows, n_prefix, n_block, lanes): each matrix's start holds its recorded
        // rows + 1 offsets into ent, whose coefficient indices are below the coefficients
        // and kinds uploaded (made together by `device_form`); every variable of the
        // layout's rows indexes z (n_in + n_aux values, checked above); a and b hold n
        // values (the caller's contract), the first grid covers n threads; bad holds one
        // u32; long_rows holds n_prefix + n_block recorded rows and the second grid covers
        // `instances` warps.
        unsafe {
            dev.launch(
                "a and b from the recorded R1CS",
                dev.k.r1cs_eval,
                (n as u32).div_ceil(THREADS),
                THREADS,
                0,
                stream,
                &mut args![mats[0], mats[1], mats[2], layout, z, a, b, check, bad],
            )?;
            if let Some(mid) = mid {
                mid.record(stream)?;
            }
            dev.launch(
                "a and b from the recorded R1CS: long rows",
                dev.k.r1cs_eval_long,
                ((instances * 32) as u32).div_ceil(THREADS),
                THREADS,
                0,
                stream,
                &mut args![
                    mats[0], mats[1], mats[2], layout, z, a, b, check, bad, long, n_prefix,
                    n_block, 32u32
                ],
            )?;
        }
        Ok(())
    }

    /// The first recorded row the last checked evaluation found unsatisfied (waits for
    /// `stream`).
    pub(crate) fn unsatisfied(
        &self,
        dev: &Device,
        stream: cudarc::driver::sys::CUstream,
    ) -> Result<Option<usize>, GpuError> {
        let mut first_bad = [0u32];
        dev.download(&mut first_bad, self.bad, stream)?;
        dev.sync(stream)?;
        Ok((first_bad[0] != u32::MAX).then_some(first_bad[0] as usize))
    }
}

/// `v` into a region of its own (at least 4 bytes), on the compute stream.
fn put<T>(dev: &mut Device, v: &[T]) -> Result<CUdeviceptr, GpuError> {
    let buf: DevBuf = dev.carve(std::mem::size_of_val(v).max(4));
    dev.upload(buf.ptr, buf.bytes, v, dev.compute)?;
    Ok(buf.ptr)
}
