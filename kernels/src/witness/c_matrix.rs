//! C of a circuit (recorded by [`super::matrix`]) applied transposed to G1 points: the fold
//! of C into L.
//!
//! Why: C's values on the domain are c = C·z (z = (1, inputs…, aux…)), so any sum
//! Σ_j c_j·P_j regroups by variable as Σ_k z_k·Q_k with Q_k = Σ_j C_jk·P_j. H in Lagrange
//! form needs Σ_j c_j·LD'_j every partition (`groth16::lagrange`); with Q made once from
//! LD' the sum joins L's MSM, whose scalars are z's aux part already
//! (`groth16::folded`), and c is no longer needed to prove.

use blstrs::{G1Affine, G1Projective, Scalar as Fr};
use ff::{Field, PrimeField};
use group::Group;
use rayon::prelude::*;

use super::matrix::{Entry, R1csMatrix, INPUT};
use crate::msm::scalars::{to_limbs, Limbs};

/// What C holds, for sizing the fold (`cuzk bench witness --c-matrix`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CStats {
    pub rows: u64,
    /// Rows whose C is empty: their c is 0 for every witness.
    pub empty_rows: u64,
    pub entries: u64,
    /// Entries by coefficient: 1, −1, below 2^64 (either sign), wider.
    pub ones: u64,
    pub minus_ones: u64,
    pub small: u64,
    pub wide: u64,
    /// Variables with at least one wide entry (their products could share doublings).
    pub wide_vars: u64,
    pub distinct_coeffs: u64,
}

/// A coefficient as the fold multiplies by it.
#[derive(Clone, Copy)]
enum Coeff {
    One,
    MinusOne,
    Small(u64, bool),
    Wide(Fr),
}

fn classify(c: &Fr) -> Coeff {
    let small = |v: &Fr| {
        let r = v.to_repr();
        let b = r.as_ref();
        b[8..]
            .iter()
            .all(|&x| x == 0)
            .then(|| u64::from_le_bytes(b[..8].try_into().unwrap()))
    };
    if *c == Fr::ONE {
        Coeff::One
    } else if *c == -Fr::ONE {
        Coeff::MinusOne
    } else if let Some(v) = small(c) {
        Coeff::Small(v, false)
    } else if let Some(v) = small(&-*c) {
        Coeff::Small(v, true)
    } else {
        Coeff::Wide(*c)
    }
}

/// v·p by double-and-add over v's bits (a power of two is doublings only).
fn mul_small(p: &G1Projective, v: u64) -> G1Projective {
    let mut acc = G1Projective::identity();
    for bit in (0..64 - v.leading_zeros()).rev() {
        acc = acc.double();
        if (v >> bit) & 1 == 1 {
            acc += p;
        }
    }
    acc
}

impl R1csMatrix {
    /// C's entries grouped by variable, for [`ByVar::q`].
    pub fn by_var(&self) -> ByVar<'_> {
        let vars = self.num_inputs + self.num_aux;
        // A counting sort of the entries by variable: start[k]..start[k + 1].
        let mut start = vec![0usize; vars + 1];
        for e in &self.entries {
            start[self.slot(e) + 1] += 1;
        }
        for k in 0..vars {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut order = vec![0u32; self.entries.len()];
        for (i, e) in self.entries.iter().enumerate() {
            let k = self.slot(e);
            order[fill[k]] = i as u32;
            fill[k] += 1;
        }
        ByVar {
            m: self,
            start,
            order,
            coeffs: self.coeffs.iter().map(classify).collect(),
        }
    }

    /// Q = Cᵀ·p: Q_k = Σ_j C_jk·p_j for every input k and aux k (p one point a row, at
    /// least `rows` of them), variables in parallel.
    pub fn fold(&self, p: &[G1Affine]) -> (Vec<G1Projective>, Vec<G1Projective>) {
        let by_var = self.by_var();
        let mut q: Vec<G1Projective> = (0..self.num_inputs + self.num_aux)
            .into_par_iter()
            .map(|k| by_var.q(k, p))
            .collect();
        let aux = q.split_off(self.num_inputs);
        (q, aux)
    }

    /// Each coefficient c as its magnitude (the smaller of c and r − c, canonical limbs)
    /// and 1 where that is r − c: −1 is then a subtraction, not 255 bits of double-and-add.
    pub fn signed_magnitudes(&self) -> (Vec<Limbs>, Vec<u32>) {
        let below = |a: &Limbs, b: &Limbs| a.iter().rev().cmp(b.iter().rev()).is_lt();
        self.coeffs
            .iter()
            .map(|c| {
                let (pos, neg) = (to_limbs(c), to_limbs(&-*c));
                if below(&neg, &pos) {
                    (neg, 1)
                } else {
                    (pos, 0)
                }
            })
            .unzip()
    }

    /// An entry's variable counted inputs first, then aux.
    fn slot(&self, e: &Entry) -> usize {
        if e.var & INPUT != 0 {
            (e.var & !INPUT) as usize
        } else {
            self.num_inputs + e.var as usize
        }
    }

    pub fn stats(&self) -> CStats {
        let classes: Vec<Coeff> = self.coeffs.iter().map(classify).collect();
        let mut s = CStats {
            rows: self.rows as u64,
            entries: self.entries.len() as u64,
            distinct_coeffs: self.coeffs.len() as u64,
            ..CStats::default()
        };
        let mut last_row = None;
        let mut filled = 0u64;
        for e in &self.entries {
            if last_row != Some(e.row) {
                filled += 1;
                last_row = Some(e.row);
            }
            match classes[e.coeff as usize] {
                Coeff::One => s.ones += 1,
                Coeff::MinusOne => s.minus_ones += 1,
                Coeff::Small(..) => s.small += 1,
                Coeff::Wide(_) => s.wide += 1,
            }
        }
        s.empty_rows = s.rows - filled;
        let mut wide_var = vec![false; self.num_inputs + self.num_aux];
        for e in &self.entries {
            if matches!(classes[e.coeff as usize], Coeff::Wide(_)) {
                wide_var[self.slot(e)] = true;
            }
        }
        s.wide_vars = wide_var.iter().filter(|&&w| w).count() as u64;
        s
    }
}

/// C's entries by variable (inputs first, then aux): [`R1csMatrix::by_var`].
pub struct ByVar<'a> {
    m: &'a R1csMatrix,
    start: Vec<usize>,
    order: Vec<u32>,
    coeffs: Vec<Coeff>,
}

impl ByVar<'_> {
    /// The entries as the device's fold reads them (c_fold.cu): `start` (variables + 1
    /// offsets), then each entry's row and coefficient index, variable after variable.
    pub fn columns(&self) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let start = self.start.iter().map(|&s| s as u32).collect();
        let (rows, coeffs) = self
            .order
            .iter()
            .map(|&i| {
                let e = self.m.entries[i as usize];
                (e.row, e.coeff)
            })
            .unzip();
        (start, rows, coeffs)
    }

    /// Q_k = Σ_j C_jk·p_j for variable k (inputs first, then aux).
    pub fn q(&self, k: usize, p: &[G1Affine]) -> G1Projective {
        assert!(p.len() >= self.m.rows, "one point a row of C");
        let mut acc = G1Projective::identity();
        for &i in &self.order[self.start[k]..self.start[k + 1]] {
            let e = self.m.entries[i as usize];
            let pt = G1Projective::from(p[e.row as usize]);
            match self.coeffs[e.coeff as usize] {
                Coeff::One => acc += pt,
                Coeff::MinusOne => acc -= pt,
                Coeff::Small(v, false) => acc += mul_small(&pt, v),
                Coeff::Small(v, true) => acc -= mul_small(&pt, v),
                Coeff::Wide(c) => acc += pt * c,
            }
        }
        acc
    }
}
