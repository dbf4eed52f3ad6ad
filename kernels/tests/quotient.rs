//! H = (A·B − C)/Z from our six transforms against bellperson's seven (its
//! `EvaluationDomain`: ifft, coset_fft, a·b − c, divide_by_z_on_coset, icoset_fft), on
//! random evaluations (not divisible by Z: both compute ((A·B − C) mod (x^n − g^n))/(g^n − 1),
//! so they agree on every input) and on a divisible one (H recovered exactly).

use bellperson::domain::EvaluationDomain;
use blstrs::Scalar as Fr;
use cuzk_kernels::groth16::quotient_in_place;
use cuzk_kernels::ntt::{self, Domain};
use ec_gpu_gen::threadpool::Worker;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn random_vec(n: usize, rng: &mut ChaCha8Rng) -> Vec<Fr> {
    (0..n).map(|_| Fr::random(&mut *rng)).collect()
}

/// bellperson's H from the evaluations a, b, c (n coefficients).
fn bellperson_h(a: &[Fr], b: &[Fr], c: &[Fr]) -> Vec<Fr> {
    let worker = Worker::new();
    let mut kern = None;
    let dom = |v: &[Fr]| EvaluationDomain::from_coeffs(v.to_vec()).unwrap();
    let (mut a, mut b, mut c) = (dom(a), dom(b), dom(c));
    for d in [&mut a, &mut b, &mut c] {
        d.ifft(&worker, &mut kern).unwrap();
        d.coset_fft(&worker, &mut kern).unwrap();
    }
    a.mul_assign(&worker, &b);
    a.sub_assign(&worker, &c);
    a.divide_by_z_on_coset(&worker);
    a.icoset_fft(&worker, &mut kern).unwrap();
    a.into_coeffs()
}

fn ours(a: &[Fr], b: &[Fr], c: &[Fr]) -> Vec<Fr> {
    let domain = Domain::new(a.len().trailing_zeros());
    let (mut a, mut b, mut c) = (a.to_vec(), b.to_vec(), c.to_vec());
    quotient_in_place(&mut a, &mut b, &mut c, &domain);
    a
}

#[test]
fn quotient_equals_bellperson_on_random_evaluations() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x9e37);
    // 2^15 and 2^16 cross the sizes where our transforms' levels run in parallel.
    for log_n in [1, 2, 3, 5, 8, 11, 15, 16] {
        let n = 1usize << log_n;
        let (a, b, c) = (
            random_vec(n, &mut rng),
            random_vec(n, &mut rng),
            random_vec(n, &mut rng),
        );
        assert_eq!(ours(&a, &b, &c), bellperson_h(&a, &b, &c), "n = 2^{log_n}");
    }
}

#[test]
fn quotient_recovers_h_when_a_times_b_minus_c_is_divisible() {
    // A, B of degree exactly n/2: A·B has degree n, and C, the interpolation of A·B on the
    // domain (c_j = a_j·b_j), is A·B mod (x^n − 1) = A·B − m·(x^n − 1) with m the product of
    // the leading coefficients. So A·B − C = m·Z: H is the constant m.
    let mut rng = ChaCha8Rng::seed_from_u64(0x51);
    let log_n = 6;
    let n = 1usize << log_n;
    let d = Domain::new(log_n);
    let mut ca = random_vec(n / 2 + 1, &mut rng);
    let mut cb = random_vec(n / 2 + 1, &mut rng);
    ca.resize(n, Fr::ZERO);
    cb.resize(n, Fr::ZERO);
    let m = ca[n / 2] * cb[n / 2];
    let (mut a, mut b) = (ca, cb);
    ntt::ntt(&mut a, &d);
    ntt::ntt(&mut b, &d);
    let c: Vec<Fr> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    let h = ours(&a, &b, &c);
    assert_eq!(h[0], m);
    assert!(h[1..].iter().all(|v| v.is_zero_vartime()));
    assert_eq!(h, bellperson_h(&a, &b, &c));
}
