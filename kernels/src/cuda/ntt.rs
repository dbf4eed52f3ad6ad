//! Host side of the NTT kernels (`kernels/cuda/ntt.cu`): twiddle tables, the pass plan,
//! and H = (A·B − C)/Z by six transforms (the CPU reference is `groth16::quotient`, which
//! says why six suffice).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use blstrs::Scalar as Fr;
use cudarc::driver::sys::CUdeviceptr;
use ff::Field;

use super::device::{args, DevBuf, Device};
use super::layout::{fr_raw, FR_BYTES};
use super::GpuError;
use crate::ntt::shoup::{self, ShoupTwiddle};
use crate::ntt::{coset_generator, powers};

/// Elements a block holds in shared memory: 2^10 (32 KiB) with 128 threads (`THREADS`) is
/// six blocks an SM (registers allow six, shared memory seven), each barrier across four
/// warps: NTT 2^27 45.97 ms on the H200 against 48.15 for 2^11 with 256 threads (three
/// blocks of eight warps), 49.50 for 2^10 with 256, 46.90 for 2^9 with 128 (docs/gpu.md).
pub const ELEMS_LOG: u32 = 10;
/// Largest radix of one pass.
pub const MAX_LOG_R: u32 = 10;
/// Shared memory of the largest pass: ELEMS elements (the in-block twiddles are read from
/// the global `small` tables, which stay in L1).
pub const MAX_SMEM: u32 = (FR_BYTES as u32) * (1 << ELEMS_LOG);
/// Shared memory of `ntt_pass_r9`: 8 limb planes of 1024 + 64 words (ntt.cu `R9_PLANE`).
const R9_SMEM: u32 = 8 * (1024 + 64) * 4;

/// The kernel radix-2^9 passes of two columns run (ntt.cu).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassBuild {
    /// `ntt_pass`: every level through shared memory (the only kernel for other radices).
    Shared = 0,
    /// `ntt_pass_r9`: butterflies in registers, 128 registers: the default.
    R9 = 1,
    /// `ntt_pass_r9u`: the same uncapped (130 registers, 3 blocks an SM).
    R9Uncapped = 2,
}

static BUILD: AtomicU32 = AtomicU32::new(PassBuild::R9 as u32);

/// Chooses the radix-2^9 pass kernel. Process-wide; for measurements (`CUZK_NTT_BUILD`:
/// `shared`, `r9`, `r9u` sets it at the first transform).
pub fn set_pass_build(b: PassBuild) {
    BUILD.store(b as u32, Ordering::Relaxed);
}

fn pass_build() -> PassBuild {
    static FROM_ENV: std::sync::Once = std::sync::Once::new();
    FROM_ENV.call_once(|| match std::env::var("CUZK_NTT_BUILD").as_deref() {
        Ok("shared") => set_pass_build(PassBuild::Shared),
        Ok("r9u") => set_pass_build(PassBuild::R9Uncapped),
        Ok("r9") => set_pass_build(PassBuild::R9),
        _ => {}
    });
    match BUILD.load(Ordering::Relaxed) {
        0 => PassBuild::Shared,
        2 => PassBuild::R9Uncapped,
        _ => PassBuild::R9,
    }
}

/// Threads of an NTT block (ntt.cu `NTT_THREADS`, the kernel's launch bound: the same).
const THREADS: u32 = 128;

/// Two-level tables of 2^b entries, b = ceil(log n / 2): lo[i] = x^i, hi[i] = c·x^{i·2^b}.
const TABLES: usize = 10;
const T_FWD: usize = 0;
const T_INV: usize = 2;
const T_COSET: usize = 4;
const T_FINAL: usize = 6;
const T_SCALE: usize = 8;
/// Small twiddles w_R^i (i < R/2) for every R = 2^1..2^MAX_LOG_R, at offset R/2 − 1: a pass
/// of radix R reads level l's w_R^{i·2^l} = w_{R/2^l}^i from the table of R/2^l.
const SMALL: usize = 1 << MAX_LOG_R;
/// The direct twiddle tables (forward, inverse) hold w_M^e for e < M = 2^min(log n, this):
/// a pass whose twiddles have order m ≤ M reads w_m^x = w_M^{x·M/m} with one load instead
/// of the two-level product (the middle pass at 2^27; 8 MiB each, L2-resident).
pub const DIRECT_LOG: u32 = 18;

/// Full tables (ntt.cu, top): n entries each, laid out like the data they scale, so a pass
/// reads one where it would multiply lo·hi. The last pass's forward twiddles (inverse
/// transforms run forward on their input read backwards), the coset pre-scale n^{-1}·g^i and
/// the quotient's post scale k·g^{-i}: each takes a product off every element of one pass.
const FULL_TABLES: usize = 3;
const F_TW: usize = 0;
const F_COSET: usize = 1;
const F_FINAL: usize = 2;

/// Bytes of the full tables for domains up to 2^max_log (12 GiB at 2^27).
pub fn full_tables_bytes(max_log: u32) -> usize {
    FULL_TABLES * (1usize << max_log) * FR_BYTES
}

static FULL_ON: AtomicBool = AtomicBool::new(true);

/// Whether transforms read the full tables where a prover holds them. Process-wide; for
/// measurements (`CUZK_NTT_FULL=0` clears it at the first transform).
pub fn set_full_tables(on: bool) {
    FULL_ON.store(on, Ordering::Relaxed);
}

fn full_tables_on() -> bool {
    static FROM_ENV: std::sync::Once = std::sync::Once::new();
    FROM_ENV.call_once(|| {
        if std::env::var("CUZK_NTT_FULL").as_deref() == Ok("0") {
            set_full_tables(false);
        }
    });
    FULL_ON.load(Ordering::Relaxed)
}

fn table_bits(log_n: u32) -> u32 {
    log_n.div_ceil(2).max(1)
}

fn direct_log(log_n: u32) -> u32 {
    log_n.min(DIRECT_LOG)
}

/// Bytes of one Shoup twiddle (ntt.cu's radix-2^9 passes read w and floor(w·2^288/r)).
const SHOUP_BYTES: usize = std::mem::size_of::<ShoupTwiddle>();

/// Fr entries of the tables before the Shoup copies of the small ones (two-level, small,
/// direct), for a domain of 2^log_n.
fn fr_entries(log_n: u32) -> usize {
    TABLES * (1usize << table_bits(log_n)) + 2 * SMALL + 2 * (1usize << direct_log(log_n))
}

/// Bytes of the table region for domains up to 2^max_log: the Fr tables, then the small
/// twiddles again as Shoup pairs (both directions).
pub fn tables_bytes(max_log: u32) -> usize {
    fr_entries(max_log) * FR_BYTES + 2 * SMALL * SHOUP_BYTES
}

/// The kernel's parameter block (`struct NttPass` in ntt.cu).
#[repr(C)]
struct NttPass {
    input: CUdeviceptr,
    in_b: CUdeviceptr,
    post_sub: CUdeviceptr,
    out: CUdeviceptr,
    tw_lo: CUdeviceptr,
    tw_hi: CUdeviceptr,
    small: CUdeviceptr,
    pre_lo: CUdeviceptr,
    pre_hi: CUdeviceptr,
    post_lo: CUdeviceptr,
    post_hi: CUdeviceptr,
    direct: CUdeviceptr,
    log_n: u32,
    log_r: u32,
    log_ns: u32,
    log_g: u32,
    tw_bits: u32,
    pre_mode: u32,
    direct_log: u32,
}
const _: () = assert!(std::mem::size_of::<NttPass>() == 128);

/// The FULL kernels' second parameter (`struct NttFull` in ntt.cu; kept out of `NttPass` so
/// the kernels without the tables compile exactly as before them).
#[repr(C)]
struct NttFull {
    rev_in: u32,
    full_tw: CUdeviceptr,
    pre_full: CUdeviceptr,
    post_full: CUdeviceptr,
}
const _: () = assert!(std::mem::size_of::<NttFull>() == 32);

/// What the first pass reads.
#[derive(Clone, Copy)]
pub(crate) enum Pre {
    None,
    /// x[i] · c·g^i from the table pair at this index.
    Scale(usize),
    /// a[i]·b[i], b[i] from this extra buffer.
    Ab(CUdeviceptr),
    /// a[i]·b[i] from these two buffers, neither of the transform's own two (which the
    /// first pass then only writes).
    Product(CUdeviceptr, CUdeviceptr),
}

/// What the last pass does to its output y.
#[derive(Clone, Copy)]
pub(crate) enum Post {
    None,
    /// y[i] · c·g^i from the table pair at this index.
    Scale(usize),
    /// y[i] · c·g^i − c·s[i], s from this buffer (c is the table's hi[0]).
    ScaleSub(usize, CUdeviceptr),
}

/// Tables for one domain size, resident in `buf`; the full tables in `full` when the
/// memory plan holds them (`full_tables_bytes(max_log)`).
pub(crate) struct NttTables {
    buf: DevBuf,
    full: Option<(DevBuf, u32)>,
    log_n: Option<u32>,
}

impl NttTables {
    pub fn new(buf: DevBuf, full: Option<(DevBuf, u32)>) -> Self {
        NttTables {
            buf,
            full,
            log_n: None,
        }
    }

    /// Where full table `which` lies, if held (each takes 2^max_log elements).
    fn full_at(&self, which: usize) -> Option<CUdeviceptr> {
        let (buf, max_log) = self.full?;
        Some(buf.at(which * (1usize << max_log) * FR_BYTES))
    }

    /// Full table `which` of the prepared domain, if held and switched on.
    fn full(&self, which: usize) -> Option<CUdeviceptr> {
        self.full_at(which).filter(|_| full_tables_on())
    }

    /// Whether the full tables are held (for the prover's description).
    pub fn holds_full(&self) -> bool {
        self.full.is_some()
    }

    fn table(&self, which: usize) -> CUdeviceptr {
        self.table_at(self.log_n.unwrap(), which)
    }

    /// `table` for the domain 2^log_n, which `prepare` is making (not yet ready).
    fn table_at(&self, log_n: u32, which: usize) -> CUdeviceptr {
        self.buf
            .at(which * (1usize << table_bits(log_n)) * FR_BYTES)
    }

    fn small(&self, inverse: bool, log_r: u32) -> CUdeviceptr {
        let b = table_bits(self.log_n.unwrap());
        let base = TABLES * (1usize << b) + if inverse { SMALL } else { 0 };
        self.buf.at((base + (1usize << (log_r - 1)) - 1) * FR_BYTES)
    }

    /// The small twiddles of radix 2^log_r as Shoup pairs (`small`'s layout, 80-byte entries).
    fn small_shoup(&self, inverse: bool, log_r: u32) -> CUdeviceptr {
        let base = fr_entries(self.log_n.unwrap()) * FR_BYTES;
        let at = if inverse { SMALL } else { 0 } + (1usize << (log_r - 1)) - 1;
        self.buf.at(base + at * SHOUP_BYTES)
    }

    fn direct(&self, inverse: bool) -> CUdeviceptr {
        let log_n = self.log_n.unwrap();
        let m = 1usize << direct_log(log_n);
        let base = TABLES * (1usize << table_bits(log_n)) + 2 * SMALL + if inverse { m } else { 0 };
        self.buf.at(base * FR_BYTES)
    }

    /// Computes (host) and uploads (then waits for the copy) the tables of 2^log_n.
    pub fn prepare(&mut self, dev: &Device, log_n: u32) -> Result<(), GpuError> {
        if self.log_n == Some(log_n) {
            return Ok(());
        }
        // The uploads below overwrite the tables: none is ready until every one is made, so
        // a step that fails leaves no domain's tables taken for ready by a retry.
        self.log_n = None;
        let n = 1usize << log_n;
        let b = table_bits(log_n);
        let len = 1usize << b;
        // The domain's scalars only: `Domain::new` would also build the CPU's twiddle tables
        // (8 GiB and ~7 s at 2^27, which a prover's first partition used to pay).
        let d = crate::ntt::Roots::new(log_n);
        let g = coset_generator();
        let n_inv = d.n_inv;
        let z_inv = d.z_on_coset().invert().unwrap();
        // R^{-1}: folded into the final scaling so its output is canonical (mont_mul(xR, y) = x·y).
        let r_inv = Fr::from(2u64).invert().unwrap().pow_vartime([256u64]);
        let pair = |x: Fr, c: Fr| {
            let lo = powers(x, len);
            let step = x.pow_vartime([len as u64]);
            let hi: Vec<Fr> = powers(step, len).into_iter().map(|v| v * c).collect();
            (lo, hi)
        };
        let m = 1usize << direct_log(log_n);
        let mut host: Vec<[u64; 4]> = Vec::with_capacity(TABLES * len + 2 * SMALL + 2 * m);
        for (x, c) in [
            (d.omega, Fr::ONE),
            (d.omega_inv, Fr::ONE),
            (g, n_inv),
            (g.invert().unwrap(), n_inv * z_inv * r_inv),
            (Fr::ONE, n_inv),
        ] {
            let (lo, hi) = pair(x, c);
            host.extend(lo.iter().map(fr_raw));
            host.extend(hi.iter().map(fr_raw));
        }
        // The small twiddles twice: Montgomery form (ntt_pass) and Shoup pairs (the
        // radix-2^9 passes, ntt.cu r9_pair).
        let mut shoup: Vec<ShoupTwiddle> = Vec::with_capacity(2 * SMALL);
        for w in [d.omega, d.omega_inv] {
            let mut small = vec![[0u64; 4]; SMALL];
            let mut small_shoup = vec![ShoupTwiddle::default(); SMALL];
            for log_r in 1..=MAX_LOG_R.min(log_n) {
                // w_R = w_n^{n/R}
                let wr = w.pow_vartime([(n >> log_r) as u64]);
                let p = powers(wr, 1 << (log_r - 1));
                let off = (1usize << (log_r - 1)) - 1;
                for (i, v) in p.iter().enumerate() {
                    small[off + i] = fr_raw(v);
                    small_shoup[off + i] = shoup::twiddle(v);
                }
            }
            host.extend(small);
            shoup.extend(small_shoup);
        }
        for w in [d.omega, d.omega_inv] {
            // w_M = w_n^{n/M}
            let wm = w.pow_vartime([(n / m) as u64]);
            host.extend(powers(wm, m).iter().map(fr_raw));
        }
        dev.upload(self.buf.ptr, self.buf.bytes, &host, dev.copy)?;
        let at = host.len() * FR_BYTES;
        dev.upload(self.buf.at(at), self.buf.bytes - at, &shoup, dev.copy)?;
        dev.sync(dev.copy)?;
        if self.full.is_some() {
            // Filled on the device from the two-level tables just uploaded.
            let last_r = *pass_plan(log_n).last().unwrap();
            for (which, tb, log_r) in [
                (F_TW, T_FWD, last_r),
                (F_COSET, T_COSET, 0),
                (F_FINAL, T_FINAL, 0),
            ] {
                let out = self.full_at(which).expect("held");
                let (lo, hi) = (self.table_at(log_n, tb), self.table_at(log_n, tb + 1));
                let mut a = args![out, lo, hi, b, log_n, log_r];
                let blocks = (n / 256).clamp(1, 1 << 16) as u32;
                // SAFETY: the arguments match `ntt_full_table`; `out` holds 2^max_log ≥ n
                // elements, lo and hi 2^b each, and every index the kernel forms is below.
                unsafe {
                    dev.launch(
                        "NTT full table",
                        dev.k.ntt_full_table,
                        blocks,
                        256,
                        0,
                        dev.compute,
                        &mut a,
                    )?
                };
            }
            dev.sync(dev.compute)?;
        }
        self.log_n = Some(log_n);
        Ok(())
    }
}

/// Radix of each pass: log n split in ceil(log n / 9) near-equal parts.
pub fn pass_plan(log_n: u32) -> Vec<u32> {
    let parts = log_n.div_ceil(9).max(1);
    (0..parts)
        .map(|i| log_n / parts + u32::from(i < log_n % parts))
        .collect()
}

/// One transform of 2^log_n elements from `src`, ping-ponging between `src` and `other`;
/// returns where the result lies. Forward: y_k = Σ x_j w^{jk}; inverse: Σ x_j w^{-jk}, no 1/n
/// unless a post table says so (with the full twiddle table it runs forward on x read
/// backwards: the same sums). `pre`: what the first pass reads; `post`: what the last pass
/// writes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn transform(
    dev: &Device,
    t: &NttTables,
    log_n: u32,
    src: CUdeviceptr,
    other: CUdeviceptr,
    inverse: bool,
    pre: Pre,
    post: Post,
) -> Result<CUdeviceptr, GpuError> {
    let plan = pass_plan(log_n);
    // The last pass's twiddles from the full table when its order n is beyond the direct
    // table's; an inverse transform then runs forward on its input read backwards.
    let full_tw = (log_n > direct_log(log_n)).then(|| t.full(F_TW)).flatten();
    let rev = inverse && full_tw.is_some();
    let inverse = inverse && !rev;
    let tw = if inverse { T_INV } else { T_FWD };
    let full_of = |table: usize| match table {
        T_COSET => t.full(F_COSET),
        T_FINAL => t.full(F_FINAL),
        _ => None,
    };
    let (mut from, mut to) = (src, other);
    let mut log_ns = 0;
    let b = table_bits(log_n);
    for (i, &log_r) in plan.iter().enumerate() {
        let first = i == 0;
        let last = i + 1 == plan.len();
        let log_g = (ELEMS_LOG - log_r.min(ELEMS_LOG)).min(log_n - log_r);
        let (pre_mode, input, in_b, pre_t) = match (first, pre) {
            (true, Pre::Scale(tb)) => (1u32, from, 0, Some(tb)),
            (true, Pre::Ab(pb)) => (2u32, from, pb, None),
            (true, Pre::Product(pa, pb)) => (2u32, pa, pb, None),
            _ => (0u32, from, 0, None),
        };
        let (post_t, post_sub) = match (last, post) {
            (true, Post::Scale(tb)) => (Some(tb), 0),
            (true, Post::ScaleSub(tb, sub)) => (Some(tb), sub),
            _ => (None, 0),
        };
        // Radix-2^9 passes of two columns take the butterflies-in-registers kernel, which
        // reads its in-block twiddles as Shoup pairs.
        let r9 = log_r == 9 && log_g == 1 && pass_build() != PassBuild::Shared;
        let p = NttPass {
            input,
            in_b,
            post_sub,
            out: to,
            tw_lo: t.table(tw),
            tw_hi: t.table(tw + 1),
            small: if r9 {
                t.small_shoup(inverse, log_r)
            } else {
                t.small(inverse, log_r)
            },
            pre_lo: pre_t.map_or(0, |x| t.table(x)),
            pre_hi: pre_t.map_or(0, |x| t.table(x + 1)),
            post_lo: post_t.map_or(0, |x| t.table(x)),
            post_hi: post_t.map_or(0, |x| t.table(x + 1)),
            direct: t.direct(inverse),
            log_n,
            log_r,
            log_ns,
            log_g,
            tw_bits: b,
            pre_mode,
            direct_log: direct_log(log_n),
        };
        let f = NttFull {
            rev_in: u32::from(first && rev),
            full_tw: if last { full_tw.unwrap_or(0) } else { 0 },
            pre_full: pre_t.and_then(full_of).unwrap_or(0),
            post_full: post_t.and_then(full_of).unwrap_or(0),
        };
        let elems = 1u32 << (log_r + log_g);
        let blocks = 1u32 << (log_n - log_r - log_g);
        // A pass that reads a full table (or its input backwards) takes a FULL kernel.
        let full = f.rev_in != 0 || f.full_tw != 0 || f.pre_full != 0 || f.post_full != 0;
        // (kernel, shared bytes, whether it takes the NttFull parameter); `r9` above.
        let (kernel, smem, takes_f) = match (r9, pass_build(), full) {
            (true, PassBuild::R9, false) => (dev.k.ntt_pass_r9, R9_SMEM, false),
            (true, PassBuild::R9, true) => (dev.k.ntt_pass_r9_full, R9_SMEM, true),
            (true, PassBuild::R9Uncapped, _) => (dev.k.ntt_pass_r9u, R9_SMEM, true),
            (_, _, false) => (dev.k.ntt_pass, FR_BYTES as u32 * elems, false),
            (_, _, true) => (dev.k.ntt_pass_full, FR_BYTES as u32 * elems, true),
        };
        let mut a = args![p, f];
        let a = if takes_f { &mut a[..] } else { &mut a[..1] };
        // SAFETY: `p` matches `struct NttPass` and `f` `struct NttFull`, passed to the
        // kernels that declare it; every pointer is a carved region of at least n elements
        // (tables sized for this log_n by `prepare`).
        unsafe { dev.launch("ntt pass", kernel, blocks, THREADS, smem, dev.compute, a)? };
        log_ns += log_r;
        std::mem::swap(&mut from, &mut to);
    }
    Ok(from)
}

/// Plain transforms for tests and benchmarks: forward, or inverse with the 1/n scaling.
pub(crate) fn ntt(
    dev: &Device,
    t: &NttTables,
    log_n: u32,
    src: CUdeviceptr,
    other: CUdeviceptr,
    inverse: bool,
) -> Result<CUdeviceptr, GpuError> {
    let post = if inverse {
        Post::Scale(T_SCALE)
    } else {
        Post::None
    };
    transform(dev, t, log_n, src, other, inverse, Pre::None, post)
}

/// H = (A·B − C)/Z from the evaluations in a, b, c (s: scratch), as `groth16::quotient`
/// computes it, but every transform natural-order: A and B to the coset ([`to_coset`]), C to
/// its coefficients only ([`to_coefficients`]), then [`coefficients`]. Returns where H lies.
pub(crate) fn quotient(
    dev: &Device,
    t: &NttTables,
    log_n: u32,
    bufs: [CUdeviceptr; 4],
) -> Result<CUdeviceptr, GpuError> {
    let [a, b, c, s] = bufs;
    to_coset(dev, t, log_n, a, s)?;
    to_coset(dev, t, log_n, b, s)?;
    let cc = to_coefficients(dev, t, log_n, c, s)?;
    let free = if cc == c { s } else { c };
    coefficients(dev, t, log_n, a, b, cc, free)
}

/// Evaluations on the domain → evaluations on the coset gH, in place in `x` (`s`: scratch):
/// inverse NTT (n·coefficients), then a forward NTT whose first pass scales input i by
/// n^{-1}·g^i. The two transforms have as many passes, so the result is back in `x`.
pub(crate) fn to_coset(
    dev: &Device,
    t: &NttTables,
    log_n: u32,
    x: CUdeviceptr,
    s: CUdeviceptr,
) -> Result<(), GpuError> {
    let r = transform(dev, t, log_n, x, s, true, Pre::None, Post::None)?;
    let o = if r == x { s } else { x };
    let r2 = transform(dev, t, log_n, r, o, false, Pre::Scale(T_COSET), Post::None)?;
    debug_assert_eq!(r2, x);
    Ok(())
}

/// Evaluations on the domain → n·coefficients (inverse NTT without the 1/n), ping-ponging
/// between `x` and `s`; returns which of the two holds them.
pub(crate) fn to_coefficients(
    dev: &Device,
    t: &NttTables,
    log_n: u32,
    x: CUdeviceptr,
    s: CUdeviceptr,
) -> Result<CUdeviceptr, GpuError> {
    transform(dev, t, log_n, x, s, true, Pre::None, Post::None)
}

/// C's n·coefficients when C·z is left to the prover (`GpuPartition::c` None): for an
/// assignment that satisfies the R1CS every row has a_j·b_j = c_j (the input rows
/// `input·0 = 0` and the zero padding too), so c = a∘b on the domain and its inverse NTT
/// is one transform whose first pass reads a·b, as [`coefficients`]' does. It ping-pongs
/// between `x` and `s` (neither `a` nor `b`, which stay as they were) and returns which of
/// the two holds the result. An assignment that does not satisfy the R1CS gets an H that
/// does not verify, as with the c it would have brought.
pub(crate) fn product_coefficients(
    dev: &Device,
    t: &NttTables,
    log_n: u32,
    ab: [CUdeviceptr; 2],
    x: CUdeviceptr,
    s: CUdeviceptr,
) -> Result<CUdeviceptr, GpuError> {
    let [a, b] = ab;
    debug_assert!(x != a && x != b && s != a && s != b && x != s);
    transform(dev, t, log_n, x, s, true, Pre::Product(a, b), Post::None)
}

/// The last transform of [`quotient`]: A·B on the coset (a, b) back to coefficients with C's
/// (n·c_i, in `cc`) subtracted: one inverse NTT, ping-ponging between `a` and `free` (neither
/// `b` nor `cc`), whose first pass reads a·b and whose last pass writes
///   h_i = y_i·k·g^{-i} − k·(n·c_i),   k = n^{-1}·(g^n − 1)^{-1}·R^{-1}
/// (y_i = n·p_i·g^i, see `groth16::quotient`; R^{-1} makes the Montgomery products come out
/// canonical: H's coefficients leave the NTT ready as MSM scalars). Returns where H lies.
pub(crate) fn coefficients(
    dev: &Device,
    t: &NttTables,
    log_n: u32,
    a: CUdeviceptr,
    b: CUdeviceptr,
    cc: CUdeviceptr,
    free: CUdeviceptr,
) -> Result<CUdeviceptr, GpuError> {
    debug_assert!(free != a && free != b && free != cc && cc != a && cc != b);
    transform(
        dev,
        t,
        log_n,
        a,
        free,
        true,
        Pre::Ab(b),
        Post::ScaleSub(T_FINAL, cc),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ntt_pass_r9` gets R9_SMEM bytes of dynamic shared memory and indexes 8 limb planes
    /// of R9_PLANE words (ntt.cu): the two must agree, or the kernel reads past its block's
    /// shared memory.
    #[test]
    fn r9_shared_memory_matches_the_kernel_source() {
        let ntt = crate::cuda::source::SOURCES
            .iter()
            .find(|(n, _)| *n == "ntt.cu")
            .unwrap()
            .1;
        let line = ntt
            .lines()
            .find(|l| l.starts_with("#define R9_PLANE "))
            .expect("ntt.cu defines R9_PLANE");
        assert!(
            line.starts_with("#define R9_PLANE (1024 + 1024 / 16)"),
            "{line}"
        );
        assert!(ntt.contains("#define R9_PAD(e) ((e) + ((e) >> 4))"));
        // The largest padded index, R9_PAD(2·511 + 1), lies inside a plane.
        let pad = |e: u32| e + (e >> 4);
        assert!(pad(1023) < 1024 + 1024 / 16);
        assert_eq!(R9_SMEM, 8 * (1024 + 1024 / 16) * 4);
    }
}
