//! Lowering: the typed IR into the rule language's syntax tree (never text). A chain of
//! filters, maps, projections and inner joins over relations is one rule body (an
//! equality between two columns one variable, an equality with a constant a constant in
//! the atom); an aggregate or a DISTINCT below the top is a helper relation the body reads.
//!
//! Multiplicities: an output the IR proves to be a set ([`crate::ir::Schema::is_bag`] is
//! false) is a plain rule; a bag output counts each row's matches, weighted by the
//! multiplicities (`_count`) of the bag relations read, into its trailing `_count`.

mod block;
mod rule;

use crate::ir::{AggregateCall, AggregateFn as Sql, Rel, Schema};
use block::Values;
use rnt_lang::syntax::ast::{AggregateFn, ArithOp, ExprKind, Rule};
use rnt_lang::value::Value;
use rule::{node, HeadPart, RuleBuilder};

/// The rules that define `relation` as `rel`, helpers first named `{prefix}N`.
pub fn rules(rel: &Rel, relation: &str, prefix: &str) -> Vec<Rule> {
    let mut lowering = Lowering {
        rules: Vec::new(),
        helpers: 0,
        prefix: prefix.to_string(),
    };
    lowering.define(relation, rel);
    lowering.rules
}

/// The rules made so far, and the helper names taken.
struct Lowering {
    rules: Vec<Rule>,
    helpers: usize,
    prefix: String,
}

impl Lowering {
    fn helper_name(&mut self) -> String {
        self.helpers += 1;
        format!("{}{}", self.prefix, self.helpers)
    }

    /// Rules defining `relation` as `rel`: its columns, and a trailing count when `rel` is
    /// a bag.
    fn define(&mut self, relation: &str, rel: &Rel) {
        if let Some((input, group, calls)) = grouping(rel) {
            // The groups are the relation itself: no helper, no copy.
            return self.aggregate(relation, input, group, calls);
        }
        let mut builder = RuleBuilder::default();
        let (values, set) = match rel {
            Rel::Distinct(input) => (self.block(input, &mut builder), true),
            _ => (self.block(rel, &mut builder), !rel.schema().is_bag()),
        };
        let mut head: Vec<HeadPart> = values
            .columns
            .into_iter()
            .map(|v| builder.head_value(v))
            .collect();
        if !set {
            head.push(count(&mut builder, &values.weights));
        }
        self.rules.push(builder.build(relation, head));
    }

    /// A helper relation holding `rel` as a set, with `rel`'s columns.
    fn helper(&mut self, rel: &Rel) -> String {
        debug_assert!(!rel.schema().is_bag(), "a helper read as a set is a set");
        let name = self.helper_name();
        match rel {
            Rel::Aggregate {
                input,
                group,
                calls,
            } => self.aggregate(&name, input, group, calls),
            _ => self.define(&name, rel),
        }
        name
    }

    /// `name(group…, calls…)` over `input`; with no group, exactly one row, as SQL gives one
    /// over no input (count 0, every other aggregate null).
    fn aggregate(&mut self, name: &str, input: &Rel, group: &[usize], calls: &[AggregateCall]) {
        let mut builder = RuleBuilder::default();
        let values = self.block(input, &mut builder);
        let mut head: Vec<HeadPart> = group
            .iter()
            .map(|&g| HeadPart::Var(builder.place(values.columns[g].clone())))
            .collect();
        for call in calls {
            head.push(aggregate_part(&mut builder, &values, call));
        }
        if !group.is_empty() {
            self.rules.push(builder.build(name, head));
            return;
        }
        let inner = self.helper_name();
        self.rules.push(builder.build(&inner, head));
        let width = calls.len();
        let mut copy = RuleBuilder::default();
        let vars = copy.atom(rule::AtomKind::Plain, &inner, width);
        let head = vars.into_iter().map(HeadPart::Var).collect();
        self.rules.push(copy.build(name, head));
        let mut empty = RuleBuilder::default();
        empty.negated(&inner, width);
        let head = calls
            .iter()
            .map(|call| match call.function {
                Sql::CountRows | Sql::Count => HeadPart::Const(Value::Int(0)),
                _ => empty.head_value(block::null_of(call.field.ty)),
            })
            .collect();
        self.rules.push(empty.build(name, head));
    }
}

/// The aggregate `rel` is, up to a projection that keeps its columns in order (renaming
/// them), when it has groups (without, it needs a helper: one row over no input).
fn grouping(rel: &Rel) -> Option<(&Rel, &[usize], &[AggregateCall])> {
    match rel {
        Rel::Aggregate {
            input,
            group,
            calls,
        } if !group.is_empty() => Some((input, group, calls)),
        Rel::Project { input, columns }
            if columns
                .iter()
                .map(|(i, _)| *i)
                .eq(0..input.schema().arity()) =>
        {
            grouping(input)
        }
        _ => None,
    }
}

/// The head term of one aggregate: over a bag, each match weighted by its multiplicity.
fn aggregate_part(builder: &mut RuleBuilder, values: &Values, call: &AggregateCall) -> HeadPart {
    let weight = values.weight(builder);
    let argument = call.argument.map(|a| values.columns[a].clone());
    let var = |builder: &mut RuleBuilder, e| Some(builder.aggregated(e));
    match (call.function, argument, weight) {
        (Sql::CountRows, _, None) => HeadPart::Aggregate(AggregateFn::Count, None),
        (Sql::CountRows, _, Some(w)) => HeadPart::Aggregate(AggregateFn::Sum, Some(w)),
        (Sql::Count, Some(x), None) => HeadPart::Aggregate(AggregateFn::Count, var(builder, x)),
        (Sql::Count, Some(x), Some(w)) => {
            let is_null = node(ExprKind::IsNull {
                expr: Box::new(x),
                negated: false,
            });
            let zero = node(ExprKind::Const(Value::Int(0)));
            let counted = node(ExprKind::Case {
                branches: vec![(is_null, zero)],
                otherwise: Some(Box::new(node(ExprKind::Var(w)))),
            });
            HeadPart::Aggregate(AggregateFn::Sum, var(builder, counted))
        }
        (Sql::Sum, Some(x), None) => HeadPart::Aggregate(AggregateFn::Sum, var(builder, x)),
        (Sql::Sum, Some(x), Some(w)) => {
            let weighted = node(ExprKind::Binary {
                op: ArithOp::Mul,
                left: Box::new(x),
                right: Box::new(node(ExprKind::Var(w))),
            });
            HeadPart::Aggregate(AggregateFn::Sum, var(builder, weighted))
        }
        (Sql::Min, Some(x), _) => HeadPart::Aggregate(AggregateFn::Min, var(builder, x)),
        (Sql::Max, Some(x), _) => HeadPart::Aggregate(AggregateFn::Max, var(builder, x)),
        (function, None, _) => {
            debug_assert!(false, "{function:?} without an argument");
            HeadPart::Aggregate(AggregateFn::Count, None)
        }
    }
}

/// A bag output's multiplicity: the matches, each weighted by the bag sources' counts.
fn count(builder: &mut RuleBuilder, weights: &[rnt_lang::syntax::ast::VarId]) -> HeadPart {
    match weights {
        [] => HeadPart::Aggregate(AggregateFn::Count, None),
        _ => {
            let values = Values {
                columns: Vec::new(),
                weights: weights.to_vec(),
            };
            HeadPart::Aggregate(AggregateFn::Sum, values.weight(builder))
        }
    }
}

/// Whether `schema`'s relation as stored has a trailing `_count` (a bag).
fn stored_width(schema: &Schema) -> usize {
    schema.arity() + usize::from(schema.is_bag())
}
