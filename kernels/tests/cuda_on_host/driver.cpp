// The host driver of cuda_on_host.rs, appended after the kernel sources: reads (u32 op, u32 n,
// data) records from stdin, runs the device code on the CPU, writes the results to stdout.
#include <cstdio>
#include <cstdlib>
static void rd(void* p, size_t n) { if (fread(p, 1, n, stdin) != n) { fprintf(stderr, "short read\n"); exit(2); } }
static void wr(const void* p, size_t n) { fwrite(p, 1, n, stdout); }

// A launch: every thread of the grid in turn, in blocks of `block` threads (128 unless the
// host launches the kernel with other blocks).
template <class Fn> static void grid(unsigned threads, Fn f, unsigned block = 128) {
  blockDim.x = block;
  gridDim.x = (threads + block - 1) / block;
  for (unsigned b = 0; b * block < threads; b++)
    for (unsigned t = 0; t < block; t++) { blockIdx.x = b; threadIdx.x = t; f(); }
}

// The point kernels of one curve (the default build, msm::AccumulateBuild::Split); `block`:
// the accumulate and batch-add blocks (msm.rs `Curve::acc_block`).
template <class F> struct Kern;
template <> struct Kern<fp2_t> {
  static constexpr auto accumulate = &msm_accumulate_split_g2;
  static constexpr auto fixup = &msm_fixup_g2;
  static constexpr auto bucket_reduce = &msm_bucket_reduce_g2;
  static constexpr auto batch = &batch_add_split_g2;
  static constexpr auto pair_sums = &pair_sums_g2;
  static constexpr auto batch_pairs = &batch_add_pairs_g2;
  static constexpr unsigned block = ACC_BLOCK_G2;
};
template <> struct Kern<fp_t> {
  static constexpr auto accumulate = &msm_accumulate_split;
  static constexpr auto fixup = &msm_fixup;
  static constexpr auto bucket_reduce = &msm_bucket_reduce;
  static constexpr auto batch = &batch_add_split;
  static constexpr auto pair_sums = &pair_sums_g1;
  static constexpr auto batch_pairs = &batch_add_pairs;
  static constexpr unsigned block = ACC_BLOCK;
};

// The kernels that call the madd (msm::AccumulateBuild::Wide: G1 msm_accumulate_wide,
// batch_add, the default before the split accumulator; G2 msm_accumulate_g2, batch_add_g2).
struct KernCalled : Kern<fp_t> {
  static constexpr auto accumulate = &msm_accumulate_wide;
  static constexpr auto batch = &batch_add;
};
struct KernCalledG2 : Kern<fp2_t> {
  static constexpr auto accumulate = &msm_accumulate_g2;
  static constexpr auto batch = &batch_add_g2;
};

// Reads c, W, K[9], S, Q, counts, bases, scalars, terms, ones; runs the launch sequence of
// msm::enqueue_msm and enqueue_batch_add; writes the W window sums and the ones' sum, then
// the ones' sum again over the bases' aligned pair sums, then over the aligned and the odd
// ones (pair_sums_*, 5 a thread, then batch_add_pairs*, as enqueue_pair_sums and
// enqueue_batch_add with pairs launch them).
// mode 1 (all windows): every window sorted into one array (msm_scan with totals,
// msm_rebase), then one accumulate and one fixup over all W·B buckets, as enqueue_msm does
// for small MSMs; else a window at a time in one window's array, sorted by the histogram
// (mode 0) or into capped slots (mode 2: msm_scatter_capped with 3 slots a bucket and the
// top quarter of the buckets past `used`, so most buckets overflow; then the counts'
// prefix sums, msm_compact and msm_place_overflow, as msm::capped launches them).
template <class F, class K = Kern<F>> static void plan_msm(unsigned mode) {
  const bool all_windows = mode == 1, capped = mode == 2;
  unsigned c, W, k[9], S, Q, nb, ns, m, no;
  rd(&c, 4); rd(&W, 4); rd(k, 36); rd(&S, 4); rd(&Q, 4);
  rd(&nb, 4); rd(&ns, 4); rd(&m, 4); rd(&no, 4);
  std::vector<affine_p<F>> bases(nb);
  std::vector<u32> scalars(8 * ns), terms(2 * m + 2), ones(no + 1);
  rd(bases.data(), nb * sizeof(affine_p<F>));
  rd(scalars.data(), 32 * ns); rd(terms.data(), 8 * m); rd(ones.data(), 4 * no);
  // Chunks of Q buckets (the last one shorter where Q does not divide B), a window's
  // results padded with one infinity (msm::ReducePlan pads to its blocks' multiple).
  const u32 B = 1u << (c - 1), chunks = (B + Q - 1) / Q, pad = chunks + 1;
  std::vector<u32> digits((size_t)W * m), counts((size_t)W * B, 0), off((size_t)W * (B + 1)), cursor((size_t)W * B),
      totals(W), sorted((size_t)W * m + 1);
  std::vector<xyzz_p<F>> buckets((size_t)W * B), reduced((size_t)W * pad);
  DigitParams p;
  p.scalars = scalars.data(); p.terms = terms.data(); p.digits = digits.data();
  p.counts = capped ? nullptr : counts.data();  // the capped sort counts in its scatter
  p.m = m; p.c = c; p.windows = W; memcpy(p.k, k, 36);
  grid(m, [&] { msm_digits(p); });
  // Window w's scatter in 1..4 bucket ranges, as msm::scatter_passes may choose.
  auto scatter = [&](u32 w) {
    const u32* dw = digits.data() + (size_t)w * m;
    const u32 passes = 1 + w % 4;
    u32* cur = cursor.data() + (size_t)w * B;
    for (u32 r = 0; r < passes; r++)
      grid(m, [&] { msm_scatter(dw, terms.data(), cur, sorted.data(), m, c, B * r / passes, B * (r + 1) / passes); });
  };
  // msm_scan's result: exclusive prefix sums of each window's histogram, at stride B with
  // the windows' totals apart (all windows), else the window's own at stride B + 1.
  for (u32 w = 0; w < W; w++) {
    u32 run = 0;
    u32* o = off.data() + (size_t)w * (all_windows ? B : B + 1);
    for (u32 b = 0; b < B; b++) { o[b] = cursor[(size_t)w * B + b] = run; run += counts[(size_t)w * B + b]; }
    if (all_windows) totals[w] = run;
    else o[B] = run;
    if (capped) {
      // The histogram above is not used: the capped scatter counts each bucket itself.
      // 3 slots a bucket in even windows, 40 in odd ones (more than a warp's 32 lanes).
      const u32 cap = w % 2 ? 40 : 3, used = B - B / 4;
      std::vector<u32> cnt(B, 0), slots((size_t)used * cap), ovf(2 * (size_t)m + 2), ovf_n(1, 0);
      const u32* dw = digits.data() + (size_t)w * m;
      for (u32 r = 0; r < 2; r++)
        grid(m, [&] { msm_scatter_capped(dw, terms.data(), cnt.data(), slots.data(), cap, used, ovf.data(),
                                         ovf_n.data(), m, c, B * r / 2, B * (r + 1) / 2); });
      u32 run2 = 0;
      for (u32 b = 0; b < B; b++) { o[b] = cursor[(size_t)w * B + b] = run2; run2 += cnt[b]; }
      o[B] = run2;
      u32* cur = cursor.data() + (size_t)w * B;
      grid(used * 32, [&] { msm_compact(slots.data(), cnt.data(), o, sorted.data(), cap, used); }, 64);
      grid(64, [&] { msm_place_overflow(ovf.data(), ovf_n.data(), cnt.data(), cur, sorted.data(), cap, used); }, 32);
    }
    if (!all_windows) {
      if (!capped) scatter(w);
      const u32 threads = (m + S - 1) / S;
      std::vector<partial_p<F>> head(threads + 1), tail(threads + 1);
      xyzz_p<F>* bk = buckets.data() + (size_t)w * B;
      grid(threads, [&] { K::accumulate(sorted.data(), o, B, S, bases.data(), bk, head.data(), tail.data()); }, K::block);
      grid(std::max(B, threads), [&] { Kern<F>::fixup(o, B, S, bk, head.data(), tail.data()); });
    }
  }
  if (all_windows) {
    grid(W * B, [&] { msm_rebase(off.data(), cursor.data(), totals.data(), B, W); });
    for (u32 w = 0; w < W; w++) scatter(w);
    const u32 threads = (W * m + S - 1) / S;
    std::vector<partial_p<F>> head(threads + 1), tail(threads + 1);
    grid(threads, [&] { K::accumulate(sorted.data(), off.data(), W * B, S, bases.data(), buckets.data(), head.data(), tail.data()); }, K::block);
    grid(std::max(W * B, threads), [&] { Kern<F>::fixup(off.data(), W * B, S, buckets.data(), head.data(), tail.data()); });
  }
  grid(W * pad, [&] { Kern<F>::bucket_reduce(buckets.data(), B, Q, W, pad, reduced.data()); });
  for (u32 w = 0; w < W; w++) {  // xyzz_reduce's result
    xyzz_p<F> acc; xyzz_set_inf(acc);
    for (u32 q = 0; q < pad; q++) xyzz_add(acc, reduced[(size_t)w * pad + q]);
    wr(&acc, sizeof acc);
  }
  const u32 parts = (no + S - 1) / S;
  std::vector<xyzz_p<F>> part(parts + 1);
  grid(parts, [&] { K::batch(bases.data(), ones.data(), no, S, part.data()); }, K::block);
  xyzz_p<F> acc; xyzz_set_inf(acc);
  for (u32 i = 0; i < parts; i++) xyzz_add(acc, part[i]);
  wr(&acc, sizeof acc);
  const u32 np = nb / 2, np_odd = (nb - 1) / 2, per = 5;
  std::vector<affine_p<F>> pairs(np + 1), odd(np_odd + 1);
  grid((np + per - 1) / per, [&] { Kern<F>::pair_sums(bases.data(), np, per, pairs.data()); });
  grid((np_odd + per - 1) / per, [&] { Kern<F>::pair_sums(bases.data() + 1, np_odd, per, odd.data()); });
  for (const affine_p<F>* o : {(const affine_p<F>*)nullptr, (const affine_p<F>*)odd.data()}) {
    grid(parts, [&] { Kern<F>::batch_pairs(bases.data(), pairs.data(), o, ones.data(), no, S, part.data()); }, K::block);
    xyzz_set_inf(acc);
    for (u32 i = 0; i < parts; i++) xyzz_add(acc, part[i]);
    wr(&acc, sizeof acc);
  }
}

// H in Lagrange form (h_lagrange.cu, ec_dft.cu), launched as lagrange.rs launches them.
// op 20, n = 2^log_n: (β, n affine bases, n scalars and n/2 twiddles split for GLV) ->
// out_j = Σ_i w^{ij}·s_i·P_i for natural j (ec_dft_scale, ec_dft_level from the widest half
// down, ec_dft_affine).
static void ec_dft(unsigned n) {
  unsigned log_n = 0;
  while ((1u << log_n) < n) log_n++;
  fp_t beta;
  rd(&beta, sizeof beta);
  std::vector<affine_t> in(n), out(n);
  std::vector<fr_t> s(n), tw(n / 2);
  std::vector<xyzz_t> x(n);
  rd(in.data(), n * sizeof(affine_t));
  rd(s.data(), n * sizeof(fr_t));
  rd(tw.data(), n / 2 * sizeof(fr_t));
  grid(n, [&] { ec_dft_scale(x.data(), in.data(), s.data(), n, beta); });
  for (int log_h = (int)log_n - 1; log_h >= 0; log_h--)
    grid(n / 2, [&] { ec_dft_level(x.data(), tw.data(), log_n, (unsigned)log_h, beta); });
  grid(n, [&] { ec_dft_affine(out.data(), x.data(), log_n); });
  wr(out.data(), n * sizeof(affine_t));
}

// op 24, (β, n (affine point, scalar split for GLV)) -> k·p as affine points
// (ec_dft_scale's xyzz_mul_glv, then xyzz_to_affine), then the same by xyzz_mul_glv_jsf.
static void mul_glv(unsigned n) {
  fp_t beta;
  rd(&beta, sizeof beta);
  std::vector<affine_t> in(n), out(n);
  std::vector<fr_t> s(n);
  std::vector<xyzz_t> x(n);
  rd(in.data(), n * sizeof(affine_t));
  rd(s.data(), n * sizeof(fr_t));
  grid(n, [&] { ec_dft_scale(x.data(), in.data(), s.data(), n, beta); });
  for (unsigned i = 0; i < n; i++) out[i] = xyzz_to_affine(x[i]);
  wr(out.data(), n * sizeof(affine_t));
  // The same products by xyzz_mul_glv_jsf, on the points as ec_dft_scale lifts them (its
  // product by 1: k1 = 1, k2 = 0).
  std::vector<fr_t> one(n);
  for (auto& k : one) k.v[0] = 1;
  grid(n, [&] { ec_dft_scale(x.data(), in.data(), one.data(), n, beta); });
  for (unsigned i = 0; i < n; i++) {
    xyzz_mul_glv_jsf(x[i], s[i], beta);
    out[i] = xyzz_to_affine(x[i]);
  }
  wr(out.data(), n * sizeof(affine_t));
}

// op 26, n scalars split for GLV -> their joint sparse forms (jsf_of: the four 160-bit
// digit masks, 80 bytes each).
static void jsf_op(unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    fr_t k;
    rd(&k, sizeof k);
    const jsf_t j = jsf_of(k);
    wr(&j, sizeof j);
  }
}

// op 21, n values of c (Montgomery) -> c canonical, the 4 counts, then the lists in kind
// order (ones, minus ones, twos: indices; other: [j, j] terms), each as long as its count
// (h_c_kinds over 2 blocks of 64 threads: several grid-stride rounds).
static void c_kinds(unsigned n) {
  std::vector<fr_t> c(n);
  rd(c.data(), n * sizeof(fr_t));
  std::vector<unsigned> ones(n), neg(n), twos(n), counts(4, 0);
  std::vector<uint2> other(n);
  // 2 blocks of 64 threads whatever n: the kernels' grid-stride rounds.
  grid(128, [&] { h_c_kinds(c.data(), n, ones.data(), neg.data(), twos.data(), other.data(), counts.data()); }, 64);
  wr(c.data(), n * sizeof(fr_t));
  wr(counts.data(), 16);
  wr(ones.data(), counts[0] * 4);
  wr(neg.data(), counts[1] * 4);
  wr(twos.data(), counts[2] * 4);
  wr(other.data(), counts[3] * 8);
}

// op 22, (k plain, n pairs a, b Montgomery) -> a·b·k canonical, in place over a (as the
// prover launches h_coset_scalars).
static void coset_scalars(unsigned n) {
  fr_t k;
  rd(&k, sizeof k);
  std::vector<fr_t> a(n), b(n);
  rd(a.data(), n * sizeof(fr_t));
  rd(b.data(), n * sizeof(fr_t));
  grid(128, [&] { h_coset_scalars(a.data(), a.data(), b.data(), k, n); }, 64);
  wr(a.data(), n * sizeof(fr_t));
}

// op 23, n variables: (n_in, LD' points, entries, coefficients, chunks), vstart[n + 1],
// cstart[chunks + 1], rows and coefficient indices (an entry each),
// magnitudes, signs, L (n − n_in points), LD' -> the n folded points (inputs' Q, then L'),
// as c_fold::fold_on_device launches c_fold_chunks, then c_fold_sum.
static void c_fold_op(unsigned n) {
  unsigned hdr[5];
  rd(hdr, sizeof hdr);
  const unsigned n_in = hdr[0], ld_n = hdr[1], entries = hdr[2], coeffs = hdr[3], chunks = hdr[4];
  std::vector<unsigned> vstart(n + 1), cstart(chunks + 1), rows(entries), coeff_of(entries), negs(coeffs);
  std::vector<fr_t> mags(coeffs);
  std::vector<affine_t> l(n - n_in), ld(ld_n), out(n);
  std::vector<xyzz_t> partial(chunks);
  rd(vstart.data(), (n + 1) * 4);
  rd(cstart.data(), (chunks + 1) * 4);
  rd(rows.data(), entries * 4);
  rd(coeff_of.data(), entries * 4);
  rd(mags.data(), coeffs * sizeof(fr_t));
  rd(negs.data(), coeffs * 4);
  rd(l.data(), (n - n_in) * sizeof(affine_t));
  rd(ld.data(), ld_n * sizeof(affine_t));
  grid(chunks, [&] {
    c_fold_chunks(partial.data(), ld.data(), cstart.data(), rows.data(), coeff_of.data(), mags.data(),
                  negs.data(), chunks);
  });
  grid(n, [&] { c_fold_sum(out.data(), l.data(), partial.data(), vstart.data(), n, n_in); });
  wr(out.data(), n * sizeof(affine_t));
}

// op 25, n (the domain): for A, B, C each (recorded rows + 1, entries, coefficients), then
// each's starts, entries (var, coefficient index), coefficients (c·R²), kinds; the layout
// (r1cs_eval.rs R1csLayout, 72 bytes); z's length and z (canonical); the check flag; the
// long rows (in the prefix, in the block, then the rows) -> a, b (n each, Montgomery) and the
// first unsatisfied row (~0: none), as r1cs_eval::eval_on_device launches r1cs_eval, then
// r1cs_eval_long (a lane a row here: threads run one after another, no warp to share).
static void r1cs_op(unsigned n) {
  unsigned hdr[9];
  rd(hdr, sizeof hdr);
  std::vector<unsigned> start[3], kind[3];
  std::vector<uint2> ent[3];
  std::vector<fr_t> coeff[3];
  R1csMat m[3];
  for (int i = 0; i < 3; i++) {
    start[i].resize(hdr[3 * i]);
    ent[i].resize(hdr[3 * i + 1]);
    coeff[i].resize(hdr[3 * i + 2]);
    kind[i].resize(hdr[3 * i + 2]);
  }
  for (int i = 0; i < 3; i++) {
    rd(start[i].data(), start[i].size() * 4);
    rd(ent[i].data(), ent[i].size() * 8);
    rd(coeff[i].data(), coeff[i].size() * sizeof(fr_t));
    rd(kind[i].data(), kind[i].size() * 4);
    m[i] = {start[i].data(), ent[i].data(), coeff[i].data(), kind[i].data()};
  }
  R1csLayout l;
  static_assert(sizeof(R1csLayout) == 72, "r1cs_eval.rs R1csLayout");
  rd(&l, sizeof l);
  unsigned vars, check, bad = ~0u;
  rd(&vars, 4);
  std::vector<fr_t> z(vars), a(n), b(n);
  rd(z.data(), vars * sizeof(fr_t));
  rd(&check, 4);
  unsigned nl[2];
  rd(nl, sizeof nl);
  std::vector<unsigned> long_rows(nl[0] + nl[1]);
  rd(long_rows.data(), long_rows.size() * 4);
  grid(n, [&] { r1cs_eval(m[0], m[1], m[2], l, z.data(), a.data(), b.data(), check, &bad); }, R1CS_THREADS);
  const unsigned instances = nl[0] + nl[1] * l.blocks;
  grid(instances, [&] {
    r1cs_eval_long(m[0], m[1], m[2], l, z.data(), a.data(), b.data(), check, &bad, long_rows.data(), nl[0], nl[1], 1);
  }, R1CS_THREADS);
  wr(a.data(), n * sizeof(fr_t));
  wr(b.data(), n * sizeof(fr_t));
  wr(&bad, 4);
}

int main() {
  unsigned op, n;
  while (fread(&op, 4, 1, stdin) == 1) {
    rd(&n, 4);
    if (op == 20) {
      ec_dft(n);
    } else if (op == 21) {
      c_kinds(n);
    } else if (op == 24) {
      mul_glv(n);
    } else if (op == 22) {
      coset_scalars(n);
    } else if (op == 23) {
      c_fold_op(n);
    } else if (op == 25) {
      r1cs_op(n);
    } else if (op == 26) {
      jsf_op(n);
    } else if (op == 1) {  // Fp2 pairs -> a·b, a² (test_fp2_mul)
      for (unsigned i = 0; i < n; i++) {
        fp2_t a, b; rd(&a, sizeof a); rd(&b, sizeof b);
        fp2_t m = fp2_mul(a, b), s = fp2_sqr(a);
        wr(&m, sizeof m); wr(&s, sizeof s);
      }
    } else if (op == 2) {  // G2 pairs -> p + q, 2(p + q) + q (test_g2_add)
      for (unsigned i = 0; i < n; i++) {
        g2_affine_t p, q; rd(&p, sizeof p); rd(&q, sizeof q);
        g2_xyzz_t acc; xyzz_set_inf(acc);
        xyzz_add_affine_signed(acc, p, false);
        xyzz_add_affine_signed(acc, q, false);
        wr(&acc, sizeof acc);
        g2_xyzz_t d = acc; xyzz_add(d, acc); xyzz_add_affine_signed(d, q, false);
        wr(&d, sizeof d);
      }
    } else if (op == 3) {  // n (u32 negate, point) -> their signed sum (msm_accumulate's loop)
      g2_xyzz_t acc; xyzz_set_inf(acc);
      for (unsigned i = 0; i < n; i++) {
        unsigned neg; g2_affine_t p; rd(&neg, 4); rd(&p, sizeof p);
        xyzz_add_affine_signed(acc, p, neg != 0);
      }
      wr(&acc, sizeof acc);
    } else if (op == 4) {  // n (u32 k, point) -> k·p by xyzz_mul_small (bucket reduction)
      for (unsigned i = 0; i < n; i++) {
        unsigned k; g2_affine_t p; rd(&k, 4); rd(&p, sizeof p);
        g2_xyzz_t acc; xyzz_set_inf(acc); xyzz_add_affine_signed(acc, p, false);
        xyzz_mul_small(acc, k);
        wr(&acc, sizeof acc);
      }
    } else if (op == 5) {  // a plan MSM over G2 through the MSM kernels (n: plan_msm's mode)
      plan_msm<fp2_t>(n);
    } else if (op == 15) {  // the same with the called madd (msm_accumulate_g2, batch_add_g2)
      plan_msm<fp2_t, KernCalledG2>(n);
    } else if (op == 6) {  // the same over G1
      plan_msm<fp_t>(n);
    } else if (op == 16) {  // the same with the called madd (msm_accumulate_wide, batch_add)
      plan_msm<fp_t, KernCalled>(n);
    } else if (op == 7) {  // Fp pairs -> a·b, a² (fp_mul, fp_sqr), a·b − a², a² − a·b
                           // (fp_mul_sub_mul: one of the two borrows unless a·b = a²)
      for (unsigned i = 0; i < n; i++) {
        fp_t a, b; rd(&a, sizeof a); rd(&b, sizeof b);
        fp_t m = fp_mul(a, b), s = fp_sqr(a);
        fp_t d = fp_mul_sub_mul(a, b, a, a), e = fp_mul_sub_mul(a, a, b, a);
        wr(&m, sizeof m); wr(&s, sizeof s); wr(&d, sizeof d); wr(&e, sizeof e);
      }
    } else if (op == 8) {  // Fr pairs -> a·b (fr_mul, CIOS), a·b (Karatsuba + SOS), a²,
                           // then fr_mul2(a, b, a², b): a·b and a²·b; then the unreduced
                           // difference d = a − b + r, b·d (fr_mul), and
                           // fr_mul2(a, d, b, b − a + r): a·(a − b), b·(b − a)
      for (unsigned i = 0; i < n; i++) {
        fr_t a, b, k, s; rd(&a, sizeof a); rd(&b, sizeof b);
        fr_t m = fr_mul(a, b);
        fe_mul_kara<FrP>(k.v, a.v, b.v);
        fe_sqr<FrP>(s.v, a.v);
        fr2_t two = fr_mul2(a, b, s, b);
        wr(&m, sizeof m); wr(&k, sizeof k); wr(&s, sizeof s);
        wr(&two.a, sizeof two.a); wr(&two.b, sizeof two.b);
        fr_t d = fr_sub_lazy(a, b), bd = fr_mul(b, d);
        fr2_t lazy = fr_mul2(a, d, b, fr_sub_lazy(b, a));
        wr(&d, sizeof d); wr(&bd, sizeof bd); wr(&lazy.a, sizeof lazy.a); wr(&lazy.b, sizeof lazy.b);
      }
    } else if (op == 17) {  // (x: 8 limbs, Shoup twiddle: 20 words) -> x·w mod r by
                            // fr_mul_tw, then fr_mul_tw2 of this record and the one before
      fr_t px; fr_tw_t pt;
      for (unsigned i = 0; i < n; i++) {
        fr_t x; fr_tw_t t; rd(&x, sizeof x); rd(&t, sizeof t);
        if (i == 0) { px = x; pt = t; }
        fr_t m = fr_mul_tw(&t, x);
        fr2_t two = fr_mul_tw2(&t, x, &pt, px);
        wr(&m, sizeof m); wr(&two.a, sizeof two.a); wr(&two.b, sizeof two.b);
        px = x; pt = t;
      }
    } else if (op == 18) {  // lazily reduced Fp pairs (a, b < 2p) -> fp_mul_lz(a, b),
                            // fp_sqr_lz(a), a·b − a² and a² − a·b (fp_mul_sub_mul_lz),
                            // fp_add_lz, fp_sub_lz, fp_canon(a), d = fp_sub_lz_4p(a, b),
                            // a·d − b² (the madd's Y3 with d below 4p), fp_is_zero_lz(a)
      for (unsigned i = 0; i < n; i++) {
        fp_t a, b; rd(&a, sizeof a); rd(&b, sizeof b);
        const fp_t d = fp_sub_lz_4p(a, b);
        fp_t o[9] = {fp_mul_lz(a, b), fp_sqr_lz(a), fp_mul_sub_mul_lz(a, b, a, a), fp_mul_sub_mul_lz(a, a, b, a),
                     fp_add_lz(a, b), fp_sub_lz(a, b), fp_canon(a), d, fp_mul_sub_mul_lz(a, d, b, b)};
        const u32 z = fp_is_zero_lz(a);
        wr(o, sizeof o); wr(&z, 4);
      }
    } else if (op == 19) {  // (u32 negate, G1 base, lazily reduced XYZZ accumulator) -> the
                            // split accumulator's madd (xyzz_madd_sh), read back by xyzz_sh_get
      for (unsigned i = 0; i < n; i++) {
        unsigned neg; affine_t a; xyzz_t acc; rd(&neg, 4); rd(&a, sizeof a); rd(&acc, sizeof acc);
        fp_t zz, zzz;
        xyzz_sh<fp_t> p;
        p.zz = sh_addr(&zz); p.zzz = sh_addr(&zzz);
        p.X = acc.X; p.Y = acc.Y; sh_st(p.zz, acc.ZZ); sh_st(p.zzz, acc.ZZZ);
        xyzz_madd_sh(p, sh_addr(&a), neg != 0);
        xyzz_t r = xyzz_sh_get(p);
        wr(&r, sizeof r);
      }
    } else { fprintf(stderr, "bad op %u\n", op); return 2; }
  }
  return 0;
}
