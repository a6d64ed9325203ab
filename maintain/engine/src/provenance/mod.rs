//! Provenance: why a tuple is in a relation at a state (`rnt why`, docs/design.md
//! "Provenance"). A derived tuple is explained by the rule instances that derive it, each
//! with the body's tuples explained in turn, down to base tuples:
//!
//! - a non-recursive rule (counting): its instances with the head bound to the tuple — a
//!   plan with every head column known, so each read binds what the tuple fixes and reads
//!   the derivation's inputs, not the relation (`instances`);
//! - an aggregate: the group's matches (the instances with the group key bound), up to
//!   the limit;
//! - a recursive stratum: a shortest derivation, by iterative deepening over the height of
//!   the derivation tree (`shortest`);
//! - a window (top-k among them): the input row, and the partition's rows that decide its
//!   value — the rows before it in window order, or the row `lag`/`lead` reads (`window`);
//! - a `not` atom, and an `optional` atom's missing match (its unmatched rule says `not`),
//!   as the pattern no tuple matches.
//!
//! The top tuple lists up to `limit` instances; a tuple below it lists one (an aggregate's
//! up to `limit`), so the tree stays small. Base tuples are leaves: which commit wrote each
//! is the database's business (`rnt_db`'s blame), never the engine's.
//!
//! *Invariant: every instance listed holds at the state read — its positive atoms' tuples
//! are there, its `not` atoms match nothing, its comparisons hold — and derives the tuple.*

mod instances;
mod shortest;
mod window;

use crate::eval::engine::Engine;
use crate::eval::plans::ProgramPlans;
use crate::eval::read::{Flow, Relations};
use crate::{EngineError, EngineResult};
use rnt_lang::check::{CheckedRule, Program};
use rnt_lang::syntax::ast::{Literal, RelationKind, TermKind};
use rnt_lang::tuple::{format_tuple, Tuple};
use rnt_lang::value::Value;

/// Instances `rnt why` lists for the tuple asked about unless `--limit` says otherwise.
pub const WHY_LIMIT_DEFAULT: usize = 10;

/// Why a tuple is in a relation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Why {
    /// The relation.
    pub relation: String,
    /// The tuple.
    pub tuple: Tuple,
    /// Whether the relation is derived (a leaf otherwise: a base tuple).
    pub derived: bool,
    /// The rule instances that derive it, as many as were asked for (none for a base tuple).
    pub instances: Vec<Instance>,
    /// Whether more instances derive it than are listed.
    pub more: bool,
}

/// One rule instance: a rule with its variables bound, and what its body holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// The rule's canonical text (an `optional` atom's unmatched case reads `not …`).
    pub rule: String,
    /// The rule's named variables and their values, in the rule's order.
    pub bindings: Vec<(String, Value)>,
    /// Each atom of the body, in the body's order.
    pub body: Vec<Fact>,
    /// For a windowed rule, the partition rows that decide the window's value.
    pub window: Option<WindowRows>,
}

/// What one atom of an instance's body holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    /// A positive atom: this tuple, explained in turn.
    Holds(Why),
    /// A `not` atom (or an `optional` atom's missing match): no tuple of the relation
    /// matches the pattern (`None` where any value would do).
    Absent {
        /// The relation.
        relation: String,
        /// The values a matching tuple would have.
        pattern: Vec<Option<Value>>,
    },
}

/// The rows of a window's partition that decide a row's value: the rows before it in
/// window order (`row_number`, `rank`, `dense_rank`, running `sum` and `count`), or the
/// rows from it to the row `lag(x, n)` (`lead(x, n)`) reads, `n` before (after) it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowRows {
    /// The window literal's text (`k = rank() over (partition p order a desc)`).
    pub literal: String,
    /// The window's value at the row.
    pub value: Value,
    /// The input relation.
    pub relation: String,
    /// The deciding rows, in window order, up to the limit.
    pub rows: Vec<Tuple>,
    /// Whether more rows decide it than are listed.
    pub more: bool,
    /// The rows come after it (`lead`), not before.
    pub after: bool,
}

/// Explains tuples of a program's relations over one state.
pub struct Provenance<'a> {
    engine: &'a Engine<'a>,
    program: &'a Program,
    plans: &'a ProgramPlans,
    limit: usize,
}

impl<'a> Provenance<'a> {
    /// Explanations over what `engine` reads, for `program` planned as `plans`, listing up
    /// to `limit` instances (at least 1) for the tuple asked about.
    pub fn new(
        engine: &'a Engine<'a>,
        program: &'a Program,
        plans: &'a ProgramPlans,
        limit: usize,
    ) -> Provenance<'a> {
        Provenance {
            engine,
            program,
            plans,
            limit: limit.max(1),
        }
    }

    /// Why `tuple` is in `relation`: an error when it is not there (exit 1), or when the
    /// relation is a denial.
    pub fn why(&self, relation: &str, tuple: &Tuple) -> EngineResult<Why> {
        let declared = self
            .program
            .relation(relation)
            .ok_or_else(|| EngineError::user(format!("unknown relation `{relation}`")))?;
        if declared.kind() == RelationKind::Denial {
            return Err(EngineError::user(format!(
                "`{relation}` is a denial: it holds no tuple in a committed state (a refused commit names its witnesses)"
            )));
        }
        if !self.holds(relation, tuple)? {
            return Err(EngineError::user(format!(
                "{} is not in `{relation}` at this state",
                rnt_lang::diagnostic::clip(&format_tuple(relation, tuple))
            )));
        }
        self.explain(relation, tuple, self.limit)
    }

    /// `tuple`, explained with up to `cap` instances (one per tuple below the first).
    fn explain(&self, relation: &str, tuple: &Tuple, cap: usize) -> EngineResult<Why> {
        let Some(declared) = self.program.relation(relation) else {
            return Err(EngineError::internal(format!(
                "a derivation reads undeclared `{relation}`"
            )));
        };
        let mut why = Why {
            relation: relation.to_string(),
            tuple: tuple.clone(),
            derived: declared.kind() != RelationKind::Relation,
            instances: Vec::new(),
            more: false,
        };
        if !why.derived {
            return Ok(why);
        }
        if self.is_recursive(relation) {
            why.instances.push(self.shortest(relation, tuple)?);
            return Ok(why);
        }
        let cap = if declared.is_aggregated() {
            self.limit
        } else {
            cap
        };
        for rule in self.program.rules_of(relation) {
            if why.instances.len() >= cap {
                why.more = true;
                break;
            }
            let (found, more) = match rule.rule.is_windowed() {
                true => self.window_instances(relation, rule, tuple, cap - why.instances.len())?,
                false => self.rule_instances(rule, tuple, cap - why.instances.len())?,
            };
            why.instances.extend(found);
            why.more |= more;
        }
        if why.instances.is_empty() {
            return Err(EngineError::internal(format!(
                "no derivation found for {} of `{relation}`, which holds",
                rnt_lang::diagnostic::clip(&format_tuple(relation, tuple))
            )));
        }
        Ok(why)
    }

    /// Whether `tuple` is in `relation`: a read with every column bound but the nulls (a
    /// bound null would match nothing in a relation evaluated when read), the tuple then
    /// compared whole.
    fn holds(&self, relation: &str, tuple: &Tuple) -> EngineResult<bool> {
        let pattern: Vec<Option<Value>> = tuple
            .iter()
            .map(|v| (!v.is_null()).then(|| v.clone()))
            .collect();
        let mut found = false;
        self.engine.read(relation, &pattern, &mut |t| {
            found = t == tuple.as_slice();
            Ok(if found { Flow::Stop } else { Flow::Continue })
        })?;
        Ok(found)
    }

    fn is_recursive(&self, relation: &str) -> bool {
        self.program
            .strata
            .stratum_of(relation)
            .is_some_and(|i| self.program.strata.strata[i].recursive)
    }

    /// The body's facts of `rule` under `bindings`, with `tuples[i]` the tuple positive
    /// literal `i` matched; each positive atom's tuple explained by `explain_fact`.
    fn facts(
        &self,
        rule: &CheckedRule,
        bindings: &[Option<Value>],
        tuples: &[Option<Tuple>],
        explain_fact: &mut dyn FnMut(&str, &Tuple) -> EngineResult<Why>,
    ) -> EngineResult<Vec<Fact>> {
        let mut body = Vec::new();
        for (i, literal) in rule.rule.body.iter().enumerate() {
            match literal {
                Literal::Positive(atom) => {
                    let tuple = tuples.get(i).cloned().flatten().ok_or_else(|| {
                        EngineError::internal(format!(
                            "an instance of `{}` without its atom's tuple",
                            atom.relation.name
                        ))
                    })?;
                    body.push(Fact::Holds(explain_fact(&atom.relation.name, &tuple)?));
                }
                Literal::Negative { atom, .. } => {
                    let pattern = atom
                        .terms
                        .iter()
                        .map(|term| match &term.kind {
                            TermKind::Var(v) => bindings[v.index()].clone(),
                            TermKind::Const(c) => Some(c.clone()),
                            TermKind::Wildcard => None,
                        })
                        .collect();
                    body.push(Fact::Absent {
                        relation: atom.relation.name.clone(),
                        pattern,
                    });
                }
                _ => {}
            }
        }
        Ok(body)
    }
}

/// The rule's named variables (not the hidden ones, named `_`) that `bindings` binds.
fn named_bindings(rule: &CheckedRule, bindings: &[Option<Value>]) -> Vec<(String, Value)> {
    rule.rule
        .variables
        .iter()
        .zip(bindings)
        .filter(|(name, _)| !name.starts_with('_'))
        .filter_map(|(name, value)| value.clone().map(|v| (name.clone(), v)))
        .collect()
}
