//! The NTT against the definition: naive evaluation, round trips, cosets.

use blstrs::Scalar as Fr;
use cuzk_kernels::ntt::{self, Domain};
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn random_vec(n: usize, seed: u64) -> Vec<Fr> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| Fr::random(&mut rng)).collect()
}

/// p(x) = Σ coeffs[j]·x^j.
fn eval(coeffs: &[Fr], x: Fr) -> Fr {
    coeffs.iter().rev().fold(Fr::ZERO, |acc, c| acc * x + c)
}

#[test]
fn ntt_matches_naive_evaluation() {
    for log_n in 0..=7 {
        let d = Domain::new(log_n);
        let coeffs = random_vec(d.n, log_n as u64);
        let mut evals = coeffs.clone();
        ntt::ntt(&mut evals, &d);
        let mut x = Fr::ONE;
        for (i, e) in evals.iter().enumerate() {
            assert_eq!(*e, eval(&coeffs, x), "n = {}, i = {i}", d.n);
            x *= d.omega;
        }
        assert_eq!(x, Fr::ONE, "omega has order n");
    }
}

#[test]
fn coset_ntt_evaluates_on_the_coset() {
    for log_n in [0, 1, 3, 6] {
        let d = Domain::new(log_n);
        let coeffs = random_vec(d.n, 100 + log_n as u64);
        let mut evals = coeffs.clone();
        ntt::coset_ntt(&mut evals, &d);
        let mut x = ntt::coset_generator();
        for e in &evals {
            assert_eq!(*e, eval(&coeffs, x));
            x *= d.omega;
        }
    }
}

#[test]
fn round_trip_at_parallel_sizes() {
    // 2^15 crosses the threshold where levels run in parallel.
    for log_n in [1, 9, 15, 16] {
        let d = Domain::new(log_n);
        let orig = random_vec(d.n, 7 + log_n as u64);
        let mut v = orig.clone();
        ntt::ntt(&mut v, &d);
        assert_ne!(v, orig);
        ntt::intt(&mut v, &d);
        assert_eq!(v, orig, "n = {}", d.n);
    }
}

#[test]
fn dif_then_dit_needs_no_permutation() {
    let d = Domain::new(14);
    let orig = random_vec(d.n, 3);
    let mut v = orig.clone();
    ntt::dif(&mut v, d.twiddles().0);
    ntt::dit(&mut v, d.twiddles().1);
    let n = Fr::from(d.n as u64);
    assert!(v.iter().zip(&orig).all(|(a, b)| *a == *b * n));
}

#[test]
fn scaling_in_bit_reversed_order() {
    for log_n in [0, 1, 5, 12] {
        let n = 1usize << log_n;
        let orig = random_vec(n, 11);
        let (g, c) = (Fr::from(7u64), Fr::from(5u64));
        let mut v = orig.clone();
        ntt::scale_by_powers_bitrev(&mut v, g, c);
        for (j, x) in v.iter().enumerate() {
            let i = ntt::bit_reverse(j, log_n);
            assert_eq!(*x, orig[j] * c * g.pow_vartime([i as u64]));
        }
    }
}

/// The scalars the GPU tables are built from (`Roots`, no twiddle tables) are the domain's:
/// ω of order exactly n, its inverse, n^{-1}, and Z on the coset.
#[test]
fn roots_are_the_domains_scalars() {
    use cuzk_kernels::ntt::Roots;
    for log_n in [1u32, 5, 12, 20] {
        let d = Domain::new(log_n);
        let r = Roots::new(log_n);
        assert_eq!(
            (r.n, r.omega, r.omega_inv, r.n_inv),
            (d.n, d.omega, d.omega_inv, d.n_inv)
        );
        assert_eq!(r.z_on_coset(), d.z_on_coset());
        assert_eq!(r.omega.pow_vartime([r.n as u64]), Fr::ONE);
        assert_ne!(r.omega.pow_vartime([(r.n / 2) as u64]), Fr::ONE);
        assert_eq!(r.omega * r.omega_inv, Fr::ONE);
        assert_eq!(r.n_inv * Fr::from(r.n as u64), Fr::ONE);
    }
}
