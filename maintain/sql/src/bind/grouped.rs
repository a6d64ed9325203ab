//! Names in a grouped block (GROUP BY, or an aggregate in SELECT or HAVING): an expression
//! equal to a GROUP BY expression is that group column; an aggregate call is a column of
//! the aggregate's output; any other column of the input is refused, as SQL refuses it.

use super::expr::{scalar, Columns, InputColumns};
use super::scope::Scope;
use super::{Bound, NotYet};
use crate::clauses::contains_aggregate;
use crate::ir::{aggregate_type, AggregateFn, Scalar, Ty};
use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, ObjectNamePart,
};

/// A grouped block's groups and the aggregates its expressions call so far.
pub struct Grouping<'s> {
    scope: &'s Scope,
    /// The GROUP BY expressions, over the input row.
    pub group: Vec<Scalar>,
    /// Each aggregate called, with its argument over the input row.
    pub calls: Vec<(AggregateFn, Option<Scalar>)>,
}

impl<'s> Grouping<'s> {
    /// The grouping of a block whose input row `scope` describes, by `group`.
    pub fn new(scope: &'s Scope, group: Vec<Scalar>) -> Grouping<'s> {
        Grouping {
            scope,
            group,
            calls: Vec::new(),
        }
    }

    /// The type of each aggregate's output column.
    pub fn call_types(&self) -> Vec<Ty> {
        self.calls
            .iter()
            .map(|(function, argument)| {
                aggregate_type(*function, argument.as_ref().map(Scalar::ty))
            })
            .collect()
    }

    fn group_column(&self, bound: &Scalar) -> Option<Scalar> {
        let index = self.group.iter().position(|g| g == bound)?;
        Some(Scalar::Column {
            index,
            ty: self.group[index].ty(),
        })
    }
}

impl Columns for Grouping<'_> {
    fn column(&mut self, parts: &[Ident]) -> Bound<Scalar> {
        let (index, ty) = self.scope.resolve(parts)?;
        self.group_column(&Scalar::Column { index, ty })
            .ok_or(NotYet("a column neither grouped nor aggregated"))
    }

    fn aggregate(&mut self, call: &Function) -> Bound<Scalar> {
        let (function, argument) = aggregate_of(call)?;
        let argument = match argument {
            Some(expr) => Some(scalar(expr, &mut InputColumns(self.scope))?),
            None => None,
        };
        let entry = (function, argument);
        let position = match self.calls.iter().position(|c| *c == entry) {
            Some(position) => position,
            None => {
                self.calls.push(entry);
                self.calls.len() - 1
            }
        };
        Ok(Scalar::Column {
            index: self.group.len() + position,
            ty: self.call_types()[position],
        })
    }

    fn whole(&mut self, expr: &Expr) -> Bound<Option<Scalar>> {
        if contains_aggregate(expr) || matches!(expr, Expr::Value(_)) {
            return Ok(None);
        }
        Ok(scalar(expr, &mut InputColumns(self.scope))
            .ok()
            .and_then(|bound| self.group_column(&bound)))
    }
}

/// The aggregate a call names, and its argument (`None` for `count(*)`).
fn aggregate_of(call: &Function) -> Bound<(AggregateFn, Option<&Expr>)> {
    let plain = call.filter.is_none()
        && call.over.is_none()
        && call.null_treatment.is_none()
        && call.within_group.is_empty()
        && matches!(call.parameters, FunctionArguments::None);
    let name = match call.name.0.as_slice() {
        [ObjectNamePart::Identifier(ident)] if ident.quote_style.is_none() => {
            ident.value.to_lowercase()
        }
        _ => return Err(NotYet("a function of this name")),
    };
    let FunctionArguments::List(list) = &call.args else {
        return Err(NotYet("a call without arguments"));
    };
    if !plain || list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
        return Err(NotYet(
            "an aggregate with DISTINCT, FILTER, OVER or clauses",
        ));
    }
    let argument = match list.args.as_slice() {
        [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] => None,
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(e))] => Some(e),
        _ => return Err(NotYet("an aggregate of these arguments")),
    };
    let function = match (name.as_str(), argument) {
        ("count", None) => AggregateFn::CountRows,
        ("count", Some(_)) => AggregateFn::Count,
        ("sum", Some(_)) => AggregateFn::Sum,
        ("min", Some(_)) => AggregateFn::Min,
        ("max", Some(_)) => AggregateFn::Max,
        _ => return Err(NotYet("an aggregate of this name")),
    };
    Ok((function, argument))
}
