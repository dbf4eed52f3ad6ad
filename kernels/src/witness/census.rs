//! Which gadget allocated each aux variable, whether the variable is in the A and B queries,
//! and (when the circuit carries a witness) whether its value is 0, 1 or anything else.
//!
//! Why: an MSM's cost depends on how many of its scalars are 0 (skipped), 1 (batch-added)
//! or wider (Pippenger), and we can only synthesize small sectors here. A blank circuit has
//! no values but has its gadgets: counted class by class (a class is the namespace path of
//! the allocation with its numbers removed, e.g. `challenge_/labeling_proof/.../sha256/...`),
//! a 32 GiB partition's census times the value mix each class shows in the real 2 KiB and
//! 8 MiB witnesses predicts the 32 GiB mix ([`Census::predict`]). The same prediction made
//! for the 8 MiB witness from the 2 KiB one alone checks the method against a measurement.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::Field;
use serde::{Deserialize, Serialize};

/// The three MSMs whose scalars are the aux assignment: L (every aux variable), A and B
/// (those with a nonzero coefficient in some A / B combination).
pub const QUERIES: [&str; 3] = ["L", "A", "B"];

/// One class's variables in one query: how many, and of those how many held 0 and 1 (both
/// 0 in a blank circuit's census).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub vars: u64,
    pub zeros: u64,
    pub ones: u64,
}

impl Counts {
    pub fn others(&self) -> u64 {
        self.vars - self.zeros - self.ones
    }

    fn add(&mut self, o: &Counts) {
        self.vars += o.vars;
        self.zeros += o.zeros;
        self.ones += o.ones;
    }
}

/// A circuit's census: per class, its counts in L, A, B.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Census {
    /// Whether values were seen (a synthesized witness) or not (a blank circuit).
    pub with_values: bool,
    pub constraints: u64,
    pub inputs: u64,
    pub classes: BTreeMap<String, [Counts; 3]>,
}

/// A query's mix predicted from learned censuses.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Predicted {
    pub vars: u64,
    pub zeros: f64,
    pub ones: f64,
    pub others: f64,
    /// Variables of classes no learned census has (counted as "other" above: the
    /// pessimistic choice for the MSMs).
    pub unseen: u64,
}

impl Census {
    /// The circuit's shape as the prover counts it (constraints include one per input).
    pub fn shape(&self) -> crate::witness::CircuitShape {
        crate::witness::CircuitShape {
            num_constraints: self.constraints as usize,
            num_inputs: self.inputs as usize,
            num_aux: self.totals()[0].vars as usize,
        }
    }

    /// Totals over every class, per query.
    pub fn totals(&self) -> [Counts; 3] {
        let mut t = [Counts::default(); 3];
        for c in self.classes.values() {
            for q in 0..3 {
                t[q].add(&c[q]);
            }
        }
        t
    }

    /// This census's variables, query by query, valued with the 0 / 1 / other fractions
    /// each class has in `learned` (pooled over all of them, within the same query).
    pub fn predict(&self, learned: &[Census]) -> [Predicted; 3] {
        let mut pool: BTreeMap<&str, [Counts; 3]> = BTreeMap::new();
        for l in learned {
            for (k, c) in &l.classes {
                let e = pool.entry(k.as_str()).or_default();
                for q in 0..3 {
                    e[q].add(&c[q]);
                }
            }
        }
        let mut out = [Predicted::default(); 3];
        for (k, c) in &self.classes {
            for q in 0..3 {
                let n = c[q].vars;
                if n == 0 {
                    continue;
                }
                let p = &mut out[q];
                p.vars += n;
                // The class's mix in this query, else in L (a class seen only outside this
                // query), else unseen.
                let learned = pool
                    .get(k.as_str())
                    .map(|l| if l[q].vars > 0 { l[q] } else { l[0] })
                    .filter(|l| l.vars > 0);
                match learned {
                    Some(l) => {
                        let f = n as f64 / l.vars as f64;
                        p.zeros += l.zeros as f64 * f;
                        p.ones += l.ones as f64 * f;
                        p.others += l.others() as f64 * f;
                    }
                    None => {
                        p.unseen += n;
                        p.others += n as f64;
                    }
                }
            }
        }
        out
    }
}

/// A constraint system that takes the census of a circuit run through it.
pub struct CensusCs<'p> {
    with_values: bool,
    /// The namespace path, each name without its digits and followed by '/', and where
    /// each name starts in it (a pop truncates there).
    path: String,
    starts: Vec<usize>,
    /// The class key being looked up (reused: one allocation a new class, not a variable).
    key: String,
    ids: HashMap<String, u32>,
    keys: Vec<String>,
    /// Per aux variable: its class, and its value class (0, 1, 2 = other) with values.
    var_class: Vec<u32>,
    var_value: Vec<u8>,
    in_a: Vec<u64>,
    in_b: Vec<u64>,
    constraints: u64,
    inputs: u64,
    /// Constraints so far, for a progress display on another thread.
    progress: Option<&'p AtomicU64>,
}

/// Appends `s` without its ASCII digits (`challenge_12` → `challenge_`).
fn push_without_digits(out: &mut String, s: &str) {
    out.extend(s.chars().filter(|c| !c.is_ascii_digit()));
}

fn set(bits: &mut Vec<u64>, i: usize) {
    if bits.len() <= i / 64 {
        bits.resize(i / 64 + 1, 0);
    }
    bits[i / 64] |= 1 << (i % 64);
}

fn get(bits: &[u64], i: usize) -> bool {
    bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
}

impl<'p> CensusCs<'p> {
    /// `with_values`: call the witness closures (a circuit with an assignment); without,
    /// they are never called (a blank circuit).
    pub fn new(with_values: bool, progress: Option<&'p AtomicU64>) -> Self {
        CensusCs {
            with_values,
            path: String::new(),
            starts: Vec::new(),
            key: String::new(),
            ids: HashMap::new(),
            keys: Vec::new(),
            var_class: Vec::new(),
            var_value: Vec::new(),
            in_a: Vec::new(),
            in_b: Vec::new(),
            constraints: 0,
            inputs: 1, // the constant ONE
            progress,
        }
    }

    fn class_of(&mut self, annotation: &str) -> u32 {
        self.key.clear();
        self.key.push_str(&self.path);
        push_without_digits(&mut self.key, annotation);
        if let Some(&id) = self.ids.get(&self.key) {
            return id;
        }
        let id = self.keys.len() as u32;
        self.keys.push(self.key.clone());
        self.ids.insert(self.key.clone(), id);
        id
    }

    pub fn finish(self) -> Census {
        let mut per = vec![[Counts::default(); 3]; self.keys.len()];
        for (i, &class) in self.var_class.iter().enumerate() {
            let (z, o) = match self.var_value.get(i) {
                Some(0) => (1, 0),
                Some(1) => (0, 1),
                _ => (0, 0),
            };
            let c = &mut per[class as usize];
            for (q, member) in [true, get(&self.in_a, i), get(&self.in_b, i)]
                .into_iter()
                .enumerate()
            {
                if member {
                    c[q].vars += 1;
                    c[q].zeros += z;
                    c[q].ones += o;
                }
            }
        }
        Census {
            with_values: self.with_values,
            constraints: self.constraints + self.inputs,
            inputs: self.inputs,
            classes: self.keys.into_iter().zip(per).collect(),
        }
    }
}

fn mark_aux(lc: &LinearCombination<Fr>, bits: &mut Vec<u64>) {
    for (&i, coeff) in lc.iter_aux() {
        if !coeff.is_zero_vartime() {
            set(bits, i);
        }
    }
}

impl ConstraintSystem<Fr> for CensusCs<'_> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if self.with_values {
            let v = f()?;
            self.var_value.push(if v == Fr::ZERO {
                0
            } else if v == Fr::ONE {
                1
            } else {
                2
            });
        }
        let class = self.class_of(&annotation().into());
        self.var_class.push(class);
        Ok(Variable::new_unchecked(Index::Aux(
            self.var_class.len() - 1,
        )))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(
            self.inputs as usize - 1,
        )))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        mark_aux(&a(LinearCombination::zero()), &mut self.in_a);
        mark_aux(&b(LinearCombination::zero()), &mut self.in_b);
        self.constraints += 1;
        if let Some(p) = self.progress {
            if self.constraints.is_multiple_of(1 << 16) {
                p.store(self.constraints, Ordering::Relaxed);
            }
        }
    }

    fn push_namespace<NR, N>(&mut self, name: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        self.starts.push(self.path.len());
        push_without_digits(&mut self.path, &name().into());
        self.path.push('/');
    }

    fn pop_namespace(&mut self) {
        if let Some(at) = self.starts.pop() {
            self.path.truncate(at);
        }
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A circuit of two gadgets in numbered namespaces: `bits` allocates k booleans (in B,
    /// through their booleanity constraint), `wide` one full-width value (in A only).
    struct Toy {
        rounds: usize,
        bits: usize,
    }

    impl bellpepper_core::Circuit<Fr> for Toy {
        fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            for r in 0..self.rounds {
                let mut cs = cs.namespace(|| format!("round_{r}"));
                for i in 0..self.bits {
                    let v = cs.alloc(|| format!("bit {i}"), || Ok(Fr::from((i % 2) as u64)))?;
                    cs.enforce(|| "boolean", |lc| lc + CS::one() - v, |lc| lc + v, |lc| lc);
                }
                let w = cs.alloc(|| "wide", || Ok(Fr::from(12345u64)))?;
                cs.enforce(|| "use", |lc| lc + w, |lc| lc + CS::one(), |lc| lc + w);
            }
            Ok(())
        }
    }

    fn census(t: Toy, with_values: bool) -> Census {
        let mut cs = CensusCs::new(with_values, None);
        bellpepper_core::Circuit::synthesize(t, &mut cs).unwrap();
        cs.finish()
    }

    #[test]
    fn classes_drop_numbers_and_count_values_per_query() {
        let c = census(Toy { rounds: 3, bits: 4 }, true);
        assert_eq!(c.classes.len(), 2, "{:?}", c.classes.keys());
        let bits = &c.classes["round_/bit "];
        // 12 bits: 6 zeros, 6 ones, all in A and B (the booleanity constraint).
        assert_eq!(
            bits[0],
            Counts {
                vars: 12,
                zeros: 6,
                ones: 6
            }
        );
        assert_eq!(bits[2], bits[0]);
        let wide = &c.classes["round_/wide"];
        assert_eq!(
            wide[0],
            Counts {
                vars: 3,
                zeros: 0,
                ones: 0
            }
        );
        assert_eq!(wide[1].vars, 3);
        assert_eq!(wide[2].vars, 0);
        assert_eq!(c.constraints, 15 + 1);
    }

    #[test]
    fn a_larger_blank_circuit_is_valued_class_by_class() {
        let learned = census(Toy { rounds: 2, bits: 4 }, true);
        let blank = census(
            Toy {
                rounds: 10,
                bits: 4,
            },
            false,
        );
        assert!(!blank.with_values);
        let [l, a, b] = blank.predict(std::slice::from_ref(&learned));
        // L: 40 bits (half zero, half one) and 10 wide values.
        assert_eq!(l.vars, 50);
        assert!((l.zeros - 20.0).abs() < 1e-9 && (l.ones - 20.0).abs() < 1e-9);
        assert!((l.others - 10.0).abs() < 1e-9);
        assert_eq!((a.vars, b.vars), (50, 40));
        assert!((b.others).abs() < 1e-9);
        assert_eq!(l.unseen, 0);
        // A class no learned census has counts as "other".
        let mut bigger = blank.clone();
        bigger.classes.insert(
            "new/gadget".into(),
            [Counts {
                vars: 5,
                zeros: 0,
                ones: 0,
            }; 3],
        );
        let [l, ..] = bigger.predict(&[learned]);
        assert_eq!(l.unseen, 5);
        assert!((l.others - 15.0).abs() < 1e-9);
    }
}
