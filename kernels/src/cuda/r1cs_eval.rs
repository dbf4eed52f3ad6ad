//! a = A·z and b = B·z on the device from a recorded R1CS (kernels/cuda/r1cs.cu; the form
//! and its CPU reference: `witness::device_form`), with every row's a·b = C·z checked.
//!
//! A building block measured on its own (`cuzk bench r1cs-device`): what making a and b on
//! the device costs, against what synthesis spends on them on the host and the slot bytes
//! they take (docs/gpu.md "a and b from the recorded R1CS"). It opens its own context and
//! allocation, so it runs beside no prover.

use std::time::{Duration, Instant};

use blstrs::Scalar as Fr;
use cudarc::driver::sys::CUdeviceptr;

use super::device::{self, args, DevBuf, Device};
use super::layout::FR_BYTES;
use super::GpuError;
use crate::msm::scalars::Limbs;
use crate::witness::device_form::{DeviceForm, DeviceMatrix};

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
        let (n_in, _) = form.vars();
        let rows = form.rows();
        let n = 1usize << log_n;
        if rows + n_in > n || n > u32::MAX as usize {
            return Err(GpuError::Input(format!(
                "{rows} rows and {n_in} input rows do not fit a domain of 2^{log_n}"
            )));
        }
        let (p, b) = (form.layout.prefix, form.layout.block);
        let r2 = form.r2;
        Ok(R1csLayout {
            p_rows: p.constraints as u32,
            b_rows: b.constraints as u32,
            blocks: form.layout.blocks as u32,
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
    let (n_in, n_aux) = form.vars();
    let layout = R1csLayout::new(form, log_n)?;
    let n = 1usize << log_n;
    if z.len() != n_in + n_aux {
        return Err(GpuError::Input(format!(
            "z has {} values, the circuit {n_in} inputs and {n_aux} aux variables",
            z.len()
        )));
    }
    let mut dev = device::open(ordinal)?;
    let matrix_bytes = |m: &DeviceMatrix| {
        m.start.len() * 4 + m.ent.len() * 8 + m.coeff.len() * FR_BYTES + m.kind.len() * 4
    };
    let bytes = form.m.iter().map(matrix_bytes).sum::<usize>()
        + (z.len() + 2 * n) * FR_BYTES
        + 4
        + form.long.len() * 4
        + 16 * 256;
    dev.allocate(bytes)?;
    let ks = dev.compute;
    let started = Instant::now();
    let mut mats = [R1csMat {
        start: 0,
        ent: 0,
        coeff: 0,
        kind: 0,
    }; 3];
    for (m, out) in form.m.iter().zip(&mut mats) {
        *out = R1csMat {
            start: put(&mut dev, &m.start)?,
            ent: put(&mut dev, &m.ent)?,
            coeff: put(&mut dev, &m.coeff)?,
            kind: put(&mut dev, &m.kind)?,
        };
    }
    let z_buf = put(&mut dev, z)?;
    let bad = put(&mut dev, &[u32::MAX])?;
    let long = put(&mut dev, &form.long)?;
    let (n_prefix, n_block) = (
        form.long_in_prefix as u32,
        (form.long.len() - form.long_in_prefix) as u32,
    );
    let instances = n_prefix as usize + n_block as usize * form.layout.blocks;
    let a_buf = dev.carve(n * FR_BYTES);
    let b_buf = dev.carve(n * FR_BYTES);
    dev.sync(ks)?;
    let upload = started.elapsed();
    let check = check as u32;
    let (start, mid, end) = (dev.event()?, dev.event()?, dev.event()?);
    let mut times = Vec::new();
    let mut long_times = Vec::new();
    for _ in 0..runs.max(1) {
        start.record(ks)?;
        // SAFETY: r1cs_eval(ma, mb, mc, layout, z, a, b, check, bad) and r1cs_eval_long(the
        // same, long_rows, n_prefix, n_block, lanes): each matrix's start holds its recorded
        // rows + 1 offsets into ent, whose coefficient indices are below the coefficients
        // and kinds uploaded (made together by `device_form`); every variable of the
        // layout's rows indexes z (n_in + n_aux values, checked above); a and b hold n
        // values, the first grid covers n threads; bad holds one u32; long_rows holds
        // n_prefix + n_block recorded rows and the second grid covers `instances` warps.
        unsafe {
            dev.launch(
                "a and b from the recorded R1CS",
                dev.k.r1cs_eval,
                (n as u32).div_ceil(THREADS),
                THREADS,
                0,
                ks,
                &mut args![
                    mats[0], mats[1], mats[2], layout, z_buf, a_buf.ptr, b_buf.ptr, check, bad
                ],
            )?;
            mid.record(ks)?;
            dev.launch(
                "a and b from the recorded R1CS: long rows",
                dev.k.r1cs_eval_long,
                ((instances * 32) as u32).div_ceil(THREADS),
                THREADS,
                0,
                ks,
                &mut args![
                    mats[0], mats[1], mats[2], layout, z_buf, a_buf.ptr, b_buf.ptr, check, bad,
                    long, n_prefix, n_block, 32u32
                ],
            )?;
        }
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
    let mut first_bad = [0u32];
    dev.download(&mut a, a_buf.ptr, ks)?;
    dev.download(&mut bv, b_buf.ptr, ks)?;
    dev.download(&mut first_bad, bad, ks)?;
    dev.sync(ks)?;
    Ok(R1csEval {
        a,
        b: bv,
        unsatisfied: (first_bad[0] != u32::MAX).then_some(first_bad[0] as usize),
        upload,
        runs: times,
        long: long_times,
    })
}

/// `v` into a region of its own (at least 4 bytes), on the compute stream.
fn put<T>(dev: &mut Device, v: &[T]) -> Result<CUdeviceptr, GpuError> {
    let buf: DevBuf = dev.carve(std::mem::size_of_val(v).max(4));
    dev.upload(buf.ptr, buf.bytes, v, dev.compute)?;
    Ok(buf.ptr)
}
