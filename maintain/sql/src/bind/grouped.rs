//! Names in a grouped block (GROUP BY, or an aggregate in SELECT or HAVING): an expression
//! equal to a GROUP BY expression is that group column; an aggregate call is a column of
//! the aggregate's output; any other column of the input is refused, as SQL refuses it.

use super::expr::{scalar, Columns, InputColumns};
use super::scope::Scope;
use super::{Bound, NotYet};
use crate::clauses::contains_aggregate;
use crate::ir::{aggregate_type, AggregateFn, Scalar, ScalarOp, Ty};
use rnt_lang::syntax::ast::{ArithOp, Function};
use rnt_lang::value::{Type, Value};
use sqlparser::ast::{
    Expr, Function as SqlFunction, FunctionArg, FunctionArgExpr, FunctionArguments, Ident,
    ObjectNamePart,
};

/// The type of SQL's `avg` of an int or a decimal.
const AVERAGE: Type = Type::Decimal {
    precision: 38,
    scale: 6,
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

    /// The output column of `function` over `argument`, one column per distinct call.
    fn call(&mut self, function: AggregateFn, argument: Option<Scalar>) -> Scalar {
        let entry = (function, argument);
        let position = match self.calls.iter().position(|c| *c == entry) {
            Some(position) => position,
            None => {
                self.calls.push(entry);
                self.calls.len() - 1
            }
        };
        Scalar::Column {
            index: self.group.len() + position,
            ty: self.call_types()[position],
        }
    }

    /// `avg(x)` of an int or a decimal: `sum / count` as a `decimal(38, 6)` truncated
    /// toward zero (DESIGN, SQL: the one exception to DuckDB's double); null over no value.
    fn average(&mut self, x: Scalar) -> Bound<Scalar> {
        let scale = match x.ty().ty {
            Some(Type::Int) => 0,
            Some(Type::Decimal { scale, .. }) => scale,
            _ => return Err(NotYet("avg of a value that is no int or decimal")),
        };
        let sum = self.call(AggregateFn::Sum, Some(x.clone()));
        let count = self.call(AggregateFn::Count, Some(x));
        let ty = Ty {
            ty: Some(AVERAGE),
            nullable: true,
        };
        let sum = match scale {
            0..=6 => Scalar::Op {
                op: ScalarOp::Cast(AVERAGE),
                args: vec![sum],
                ty,
            },
            _ => {
                let six = Scalar::Literal {
                    value: Value::Int(6),
                    ty: Ty::of(Type::Int),
                };
                Scalar::Op {
                    op: ScalarOp::Call(Function::Trunc),
                    args: vec![sum, six],
                    ty,
                }
            }
        };
        Ok(Scalar::Op {
            op: ScalarOp::Arith(ArithOp::Div),
            args: vec![sum, count],
            ty,
        })
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

    fn aggregate(&mut self, call: &SqlFunction) -> Bound<Scalar> {
        let (name, argument) = aggregate_of(call)?;
        let argument = match argument {
            Some(expr) => Some(scalar(expr, &mut InputColumns(self.scope))?),
            None => None,
        };
        if argument.as_ref().is_some_and(|a| a.ty().ty.is_none()) {
            return Err(NotYet("an aggregate of a bare NULL"));
        }
        match (name.as_str(), argument) {
            ("avg", Some(x)) => self.average(x),
            (name, argument) => {
                let function = match (name, &argument) {
                    ("count", None) => AggregateFn::CountRows,
                    ("count", Some(_)) => AggregateFn::Count,
                    ("sum", Some(_)) => AggregateFn::Sum,
                    ("min", Some(_)) => AggregateFn::Min,
                    ("max", Some(_)) => AggregateFn::Max,
                    _ => return Err(NotYet("an aggregate of this name")),
                };
                Ok(self.call(function, argument))
            }
        }
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

/// The aggregate a call names (lower case), and its argument (`None` for `count(*)`).
fn aggregate_of(call: &SqlFunction) -> Bound<(String, Option<&Expr>)> {
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
    Ok((name, argument))
}
