//! Window functions (`f(…) OVER (PARTITION BY … ORDER BY …)`) and QUALIFY, as window
//! literals: `row_number rank dense_rank` → themselves, `sum(x)` and `count(*)` → running
//! `sum`/`count` (ROWS UNBOUNDED PRECEDING), `lag lead` → themselves.
//!
//! A rule holds one window literal and reads one relation. A SELECT over one table
//! (filtered) with one window is that rule; one over joins, or whose window terms are
//! computed, first gathers its rows in a helper view, and each window after the first
//! reads a helper holding the rows with the windows before it. A nullable `sum(x)` is two
//! literals: the running sum of `coalesce(x, 0)` and the running count of values, null
//! while that is 0. Rows that may repeat (a table without a primary key, a join of one)
//! are first expanded into numbered copies (`copies`), so a window numbers each copy.
//! QUALIFY's conditions apply after every window (each must read a window's value; one that
//! does not belongs in WHERE).

use crate::body::{AtomKind, Body, Ex, Var, WindowLit};
use crate::catalog::{Column, Table};
use crate::conjunct::expr_may_be_null;
use crate::error::{SqlError, SqlResult};
use crate::expr::{self, Context};
use crate::scope::Scope;
use crate::select::{map_operands, place, split_and, visit, weight_product, weights, Lowerer};
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::value::Type;
use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, OrderByExpr, OrderBySort,
    WindowFrame, WindowFrameBound, WindowFrameUnits, WindowSpec, WindowType,
};

/// Replacements of window calls by their result variables, for lowering the output.
pub type Replacements = Vec<(Expr, Ex, Option<Type>)>;

/// Whether `expr` holds a window call.
pub fn has_window(expr: &Expr) -> bool {
    let mut found = false;
    visit(expr, &mut |e| found |= window_call(e).is_some());
    found
}

fn window_call(expr: &Expr) -> Option<(&Function, &WindowSpec)> {
    match expr {
        Expr::Function(f) => match &f.over {
            Some(WindowType::WindowSpec(spec)) => Some((f, spec)),
            _ => None,
        },
        _ => None,
    }
}

/// Every window call in `exprs`, each once.
fn window_calls(exprs: &[&Expr]) -> Vec<Expr> {
    let mut calls: Vec<Expr> = Vec::new();
    for expr in exprs {
        visit(expr, &mut |e| {
            if window_call(e).is_some() && !calls.contains(e) {
                calls.push(e.clone());
            }
        });
    }
    calls
}

/// One window call, its terms lowered to variables of the body.
struct Call {
    expr: Expr,
    function: &'static str,
    argument: Option<Var>,
    constants: Vec<String>,
    partition: Vec<Var>,
    order: Vec<(Var, bool)>,
    ty: Option<Type>,
    /// For `sum(x)`: whether `x` may be null. The running sum is then of `coalesce(x, 0)`,
    /// beside a running count of the values (a sum of 1 where `x` is not null, 0 where it
    /// is), and the result is null while that count is 0: SQL's `sum` skips nulls and is
    /// null over none.
    nullable: bool,
}

/// What a window literal's argument is computed as, in the window's own rule (where an
/// argument may be computed; partition and order terms must be the atom's variables).
#[derive(Clone, Copy, PartialEq)]
enum Argument {
    /// The variable itself.
    Plain,
    /// `coalesce(x, 0)`.
    ZeroForNull,
    /// 1 where `x` is not null, else 0.
    Present,
}

/// One window literal to add: a call's, or the count of values a nullable `sum` adds.
struct Literal {
    function: &'static str,
    argument: Option<Var>,
    computed: Argument,
    constants: Vec<String>,
    partition: Vec<Var>,
    order: Vec<(Var, bool)>,
}

impl Literal {
    /// Every variable the literal reads.
    fn vars(&self) -> Vec<Var> {
        let mut vars: Vec<Var> = self.argument.into_iter().collect();
        vars.extend(&self.partition);
        vars.extend(self.order.iter().map(|(v, _)| *v));
        vars
    }

    /// Every variable the literal reads, in [`Literal::vars`]'s order.
    fn vars_mut(&mut self) -> Vec<&mut Var> {
        let mut vars: Vec<&mut Var> = self.argument.iter_mut().collect();
        vars.extend(self.partition.iter_mut());
        vars.extend(self.order.iter_mut().map(|(v, _)| v));
        vars
    }
}

impl Argument {
    /// The argument computed from `x`.
    fn of(self, x: Var) -> Ex {
        let zero = || Ex::Lit("0".into());
        match self {
            Argument::Plain => Ex::Var(x),
            Argument::ZeroForNull => Ex::Call("coalesce", vec![Ex::Var(x), zero()]),
            Argument::Present => Ex::Case(
                vec![(Ex::IsNull(Box::new(Ex::Var(x)), false), zero())],
                Some(Box::new(Ex::Lit("1".into()))),
            ),
        }
    }
}

impl Call {
    /// The call's window literals: one, or for a nullable `sum` two (the running sum of
    /// `coalesce(x, 0)`, then the running count of values).
    fn literals(self) -> (Expr, Option<Type>, Vec<Literal>) {
        let computed = match self.nullable {
            true => Argument::ZeroForNull,
            false => Argument::Plain,
        };
        let mut literals = vec![Literal {
            function: self.function,
            argument: self.argument,
            computed,
            constants: self.constants,
            partition: self.partition.clone(),
            order: self.order.clone(),
        }];
        if self.nullable {
            literals.push(Literal {
                function: "sum",
                argument: self.argument,
                computed: Argument::Present,
                constants: Vec::new(),
                partition: self.partition,
                order: self.order,
            });
        }
        (self.expr, self.ty, literals)
    }
}

/// The variables of a scope's sources and merged columns, in a fixed order.
fn scope_vars_mut(scope: &mut Scope) -> Vec<&mut Var> {
    let mut vars: Vec<&mut Var> = Vec::new();
    for source in &mut scope.sources {
        vars.extend(source.vars.iter_mut());
    }
    vars.extend(scope.merged.iter_mut().map(|(_, var, _)| var));
    vars
}

impl Lowerer<'_> {
    /// Adds the windows of `items` and `qualify` to `body`, and QUALIFY's conditions;
    /// returns the body and scope to lower the output over, and the window calls'
    /// replacements. A rule holds one window literal and reads one relation: the body's
    /// rows are gathered in a helper view first when it reads more than one relation or a
    /// term is computed, and each window after the first reads a helper holding the rows
    /// with the windows before it.
    pub fn windows(
        &mut self,
        items: &[(Expr, String)],
        qualify: Option<&Expr>,
        body_in: Body,
        scope: &Scope,
    ) -> SqlResult<(Body, Scope, Replacements)> {
        let (body, expanded);
        let scope = match weights(scope).is_empty() {
            true => {
                body = body_in;
                scope
            }
            false => {
                (body, expanded) = self.copies(body_in, scope);
                &expanded
            }
        };
        let qualify = qualify.map(|q| with_window_aliases(q, items, scope));
        let qualify = qualify.as_ref();
        let mut exprs: Vec<&Expr> = items.iter().map(|(e, _)| e).collect();
        exprs.extend(qualify);
        let mut body = body;
        let mut literals: Vec<Literal> = Vec::new();
        let mut calls: Vec<(Expr, Option<Type>, Vec<usize>)> = Vec::new();
        for call in window_calls(&exprs) {
            let (expr, ty, more) = lower_call(call, scope, &mut body)?.literals();
            calls.push((
                expr,
                ty,
                (literals.len()..literals.len() + more.len()).collect(),
            ));
            literals.extend(more);
        }
        if literals.is_empty() {
            return Err(SqlError::bind(
                "QUALIFY needs a window function in the SELECT list or in QUALIFY",
            ));
        }
        let mut scope = scope.clone();
        let mut results: Vec<Var> = Vec::new();
        for at in 0..literals.len() {
            let plain = at == 0 && body.single_plain_atom() && reads_atoms(&body, &literals);
            if !plain {
                body = self.gather(body, &mut scope, &mut results, &mut literals[at..]);
            }
            if !plain && literals[at].function == "sum" && literals[at].computed == Argument::Plain
            {
                // A helper's columns are declared nullable: a value known not to be null
                // reads as `coalesce(x, 0)`, which the checker knows is not null.
                literals[at].computed = Argument::ZeroForNull;
            }
            let literal = &literals[at];
            let result = body.var();
            let mut arguments: Vec<Ex> = literal
                .argument
                .map(|x| Ex::Var(place(&mut body, literal.computed.of(x))))
                .into_iter()
                .collect();
            arguments.extend(literal.constants.iter().cloned().map(Ex::Lit));
            body.window(WindowLit {
                result,
                function: literal.function,
                arguments,
                partition: literal.partition.clone(),
                order: literal.order.clone(),
            });
            results.push(result);
        }
        if let Some(qualify) = qualify {
            if literals.len() > 1 || reads_no_window(qualify) {
                // A rule's conditions on its atom's columns filter before its window: QUALIFY
                // comes after every window (a condition reading none of them too), so it
                // filters a helper holding them all.
                body = self.gather(body, &mut scope, &mut results, &mut []);
            }
            let replacements = replacements_of(&calls, &results);
            qualify_rows(qualify, &scope, &replacements, &mut body)?;
        }
        Ok((body, scope, replacements_of(&calls, &results)))
    }

    /// Gathers `body`'s rows in a helper view and returns a body reading it, with the
    /// scope's, the results' and the literals' variables mapped onto its columns.
    /// The rows of `body`, which may repeat (its scope has weights), as a set of numbered
    /// copies the windows read: a row of multiplicity n becomes n rows, the same values and
    /// a last column 1 … n. So a window numbers each copy, and rows SQL's ORDER BY leaves
    /// tied are ordered by the remaining columns, then by copy (the engine orders a
    /// partition by the order terms, then the atom's other columns). Helpers:
    /// `rows` (the body's distinct matches, `widen`), `most(max(n))`, `copy(i)` for
    /// i = 1 … most (recursive), and `copies(rows…, i) :- rows(…), copy(i), i <= n`. A
    /// change of a row reads its copies (O(n)), and the numbers only when the most grows.
    fn copies(&mut self, body: Body, scope: &Scope) -> (Body, Scope) {
        let mut scope = scope.clone();
        let weights = weights(&scope);
        let mut vars: Vec<&mut Var> = scope_vars_mut(&mut scope);
        let mut needed: Vec<Var> = vars.iter().map(|v| **v).collect();
        needed.extend(weights.iter().map(|(w, _)| *w));
        let (mut rows, mapped) = self.widen(body, &needed);
        for (var, new) in vars.iter_mut().zip(&mapped) {
            **var = *new;
        }
        let mapped_weights: Vec<(Var, bool)> = weights
            .iter()
            .zip(&mapped[mapped.len() - weights.len()..])
            .map(|((_, optional), w)| (*w, *optional))
            .collect();
        let n = rows.var();
        rows.assign(n, weight_product(&mapped_weights));
        let (most, copy, copies) = (self.helper_name(), self.helper_name(), self.helper_name());
        self.push_rule(format!("{most}(max({})) :- {}.", rows.name(n), rows.text()));
        self.push_rule(format!("{copy}(1) :- {most}(m), m >= 1."));
        self.push_rule(format!(
            "{copy}(j) :- {copy}(i), {most}(m), i < m, j = i + 1."
        ));
        let atom_vars = rows.atom_vars();
        let terms: Vec<String> = atom_vars.iter().map(|v| rows.name(*v)).collect();
        let i = rows.var();
        rows.atom(AtomKind::Plain, &copy, vec![Some(i)]);
        rows.filter(Ex::bin("<=", Ex::Var(i), Ex::Var(n)));
        self.push_rule(format!(
            "{copies}({}, {}) :- {}.",
            terms.join(", "),
            rows.name(i),
            rows.text()
        ));
        let width = terms.len() + 1;
        self.made(Table {
            name: copies.clone(),
            kind: RelationKind::View,
            columns: (0..width)
                .map(|c| Column {
                    name: format!("c{c}"),
                    ty: None,
                })
                .collect(),
            bag: false,
            keys: vec![(0..width).collect()],
        });
        let mut expanded = Body::default();
        let fresh: Vec<Var> = (0..width).map(|_| expanded.var()).collect();
        expanded.atom(
            AtomKind::Plain,
            &copies,
            fresh.iter().map(|v| Some(*v)).collect(),
        );
        for var in scope_vars_mut(&mut scope) {
            let at = atom_vars
                .iter()
                .position(|a| rows.same(*a, *var))
                .expect("every column of the scope is a column of the gathered rows");
            *var = fresh[at];
        }
        for source in &mut scope.sources {
            source.weight = None;
        }
        (expanded, scope)
    }

    fn gather(
        &mut self,
        body: Body,
        scope: &mut Scope,
        results: &mut [Var],
        literals: &mut [Literal],
    ) -> Body {
        let mut vars: Vec<&mut Var> = scope_vars_mut(scope);
        vars.extend(results.iter_mut());
        for literal in literals.iter_mut() {
            vars.extend(literal.vars_mut());
        }
        let needed: Vec<Var> = vars.iter().map(|v| **v).collect();
        let (wide, mapped) = self.widen(body, &needed);
        debug_assert_eq!(mapped.len(), vars.len());
        for (var, new) in vars.into_iter().zip(mapped) {
            *var = new;
        }
        wide
    }
}

/// Each call's replacement: its expression, its value from the results, its type.
fn replacements_of(calls: &[(Expr, Option<Type>, Vec<usize>)], results: &[Var]) -> Replacements {
    calls
        .iter()
        .map(|(expr, ty, at)| (expr.clone(), call_value(at, results), *ty))
        .collect()
}

/// Whether every variable `literals` read is an atom's.
fn reads_atoms(body: &Body, literals: &[Literal]) -> bool {
    let atom_vars = body.atom_vars();
    literals
        .iter()
        .flat_map(Literal::vars)
        .all(|v| atom_vars.iter().any(|a| body.same(*a, v)))
}

/// A call's value from its literals' results: the result itself, or for a nullable
/// `sum` null while the count of values (the second literal) is 0.
fn call_value(literals: &[usize], results: &[Var]) -> Ex {
    match literals {
        [only] => Ex::Var(results[*only]),
        [sum, count] => {
            let none = Ex::bin("=", Ex::Var(results[*count]), Ex::Lit("0".into()));
            Ex::Case(
                vec![(none, Ex::Lit("null".into()))],
                Some(Box::new(Ex::Var(results[*sum]))),
            )
        }
        _ => unreachable!("a call has one or two literals"),
    }
}

/// `qualify` with each bare name of an output column that holds a window (`QUALIFY t > 2`
/// for `… OVER (…) AS t`) replaced by that column's expression, as DuckDB reads it; a name
/// the FROM clause's columns hold keeps meaning the column.
fn with_window_aliases(qualify: &Expr, items: &[(Expr, String)], scope: &Scope) -> Expr {
    let aliased = |name: &str| -> Option<Expr> {
        if scope.resolve(None, name).is_ok() {
            return None;
        }
        items
            .iter()
            .find(|(e, alias)| alias == name && has_window(e))
            .map(|(e, _)| e.clone())
    };
    substitute(qualify, &aliased)
}

/// `expr` with each bare identifier `replace` gives an expression for replaced by it,
/// through the operators a condition is made of (others are kept as they are).
fn substitute(expr: &Expr, replace: &dyn Fn(&str) -> Option<Expr>) -> Expr {
    if let Expr::Identifier(ident) = expr {
        return replace(&ident.value.to_lowercase()).unwrap_or_else(|| expr.clone());
    }
    match map_operands(expr, &mut |e| Ok(substitute(e, replace))) {
        Ok(Some(mapped)) => mapped,
        _ => expr.clone(),
    }
}

/// Whether a conjunct of QUALIFY reads no window's value: it still filters after the
/// windows (the rows it drops are numbered), so the windows' rows are gathered first.
fn reads_no_window(qualify: &Expr) -> bool {
    let mut conjuncts = Vec::new();
    split_and(qualify, &mut conjuncts);
    conjuncts.iter().any(|c| !has_window(c))
}

/// Adds QUALIFY's conditions as filters after the windows.
fn qualify_rows(
    qualify: &Expr,
    scope: &Scope,
    replacements: &Replacements,
    body: &mut Body,
) -> SqlResult<()> {
    let mut conjuncts = Vec::new();
    split_and(qualify, &mut conjuncts);
    let cx = Context { replacements };
    for conjunct in &conjuncts {
        let (condition, _) = expr::lower(conjunct, scope, &cx, body)?;
        body.filter(condition);
    }
    Ok(())
}

/// A window call's function, arguments and terms, each term placed in a variable.
fn lower_call(expr: Expr, scope: &Scope, body: &mut Body) -> SqlResult<Call> {
    let (function, spec) = window_call(&expr).expect("a window call");
    let name = function.name.to_string().to_lowercase();
    let arguments = call_arguments(function)?;
    let cx = Context::default();
    let lower = |e: &Expr, body: &mut Body| -> SqlResult<(Var, Option<Type>)> {
        let (ex, ty) = expr::lower(e, scope, &cx, body)?;
        Ok((place(body, ex), ty))
    };
    let (partition, order) = window_terms(spec, scope, body)?;
    let mut nullable = false;
    let (function_name, argument, constants, ty) = match (name.as_str(), arguments.as_slice()) {
        ("row_number" | "rank" | "dense_rank", []) => {
            let f = match name.as_str() {
                "row_number" => "row_number",
                "rank" => "rank",
                _ => "dense_rank",
            };
            (f, None, Vec::new(), Some(Type::Int))
        }
        ("count", [None]) => {
            running_frame(spec, "count(*)")?;
            ("count", None, Vec::new(), Some(Type::Int))
        }
        ("count", [Some(x)]) => {
            // The running count of values: a running sum of 1 per row whose `x` is not null.
            running_frame(spec, "count")?;
            let (v, _) = lower(x, body)?;
            let one = Ex::Case(
                vec![(Ex::IsNull(Box::new(Ex::Var(v)), false), Ex::Lit("0".into()))],
                Some(Box::new(Ex::Lit("1".into()))),
            );
            ("sum", Some(place(body, one)), Vec::new(), Some(Type::Int))
        }
        ("sum", [Some(x)]) => {
            running_frame(spec, "sum")?;
            let (v, ty) = lower(x, body)?;
            // DuckDB's running SUM of a DECIMAL(p, s) is a DECIMAL(38, s); of an INT, an
            // int here (exact, where DuckDB widens to HUGEINT).
            let ty = match ty {
                Some(Type::Decimal { scale, .. }) => Some(Type::Decimal {
                    precision: 38,
                    scale,
                }),
                None | Some(Type::Int) => ty,
                Some(other) => {
                    return Err(SqlError::unsupported(format!(
                        "a running `sum` of `{}`, which is {other}, not a number (INT or \
                         DECIMAL)",
                        crate::error::clip(x)
                    )))
                }
            };
            nullable = expr_may_be_null(x, scope);
            ("sum", Some(v), Vec::new(), ty)
        }
        ("lag" | "lead", [Some(x), rest @ ..]) if rest.len() <= 2 => {
            let f = if name == "lag" { "lag" } else { "lead" };
            let (v, ty) = lower(x, body)?;
            let mut constants = vec![offset(rest.first().copied().flatten())?];
            if let Some(Some(default)) = rest.get(1) {
                let (ex, _) = expr::lower(default, scope, &cx, body)?;
                match &ex {
                    Ex::Lit(text) => constants.push(text.clone()),
                    Ex::Neg(inner) if let Ex::Lit(text) = inner.as_ref() => {
                        constants.push(format!("-{text}"))
                    }
                    _ => {
                        return Err(SqlError::unsupported(format!(
                            "`{f}`'s default `{default}` (a constant is)"
                        )))
                    }
                }
            }
            (f, Some(v), constants, ty)
        }
        _ => {
            return Err(SqlError::unsupported(format!(
                "the window function `{}` (row_number, rank, dense_rank, sum, count, lag and \
                 lead are)",
                crate::error::clip(&expr)
            )))
        }
    };
    Ok(Call {
        expr,
        function: function_name,
        argument,
        constants,
        partition,
        order,
        ty,
        nullable,
    })
}

/// A window's order terms: each a variable and whether it is descending.
type OrderTerms = Vec<(Var, bool)>;

/// A window's PARTITION BY and ORDER BY terms as variables of `body` (each order term with
/// its direction).
fn window_terms(
    spec: &WindowSpec,
    scope: &Scope,
    body: &mut Body,
) -> SqlResult<(Vec<Var>, OrderTerms)> {
    let cx = Context::default();
    let lower = |e: &Expr, body: &mut Body| -> SqlResult<Var> {
        let (ex, _) = expr::lower(e, scope, &cx, body)?;
        Ok(place(body, ex))
    };
    let mut partition = Vec::new();
    for term in &spec.partition_by {
        partition.push(lower(term, body)?);
    }
    let mut order = Vec::new();
    for term in &spec.order_by {
        let (value, descending) = (lower(&term.expr, body)?, descending(term)?);
        if term.options.nulls_first == Some(true) {
            // Nulls order last in both directions; NULLS FIRST orders by `x is null`,
            // descending (true first), before `x` itself. Peers stay peers.
            let null = place(body, Ex::IsNull(Box::new(Ex::Var(value)), false));
            order.push((null, true));
        }
        order.push((value, descending));
    }
    Ok((partition, order))
}

/// A call's arguments: `None` for `*`.
fn call_arguments(function: &Function) -> SqlResult<Vec<Option<&Expr>>> {
    let FunctionArguments::List(list) = &function.args else {
        return Ok(Vec::new());
    };
    if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
        return Err(SqlError::unsupported(format!(
            "`{function}` in a window (DISTINCT or ORDER BY inside the call)"
        )));
    }
    list.args
        .iter()
        .map(|arg| match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(Some(e)),
            FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => Ok(None),
            _ => Err(SqlError::unsupported(format!("the argument `{arg}`"))),
        })
        .collect()
}

/// `lag`/`lead`'s row offset: a non-negative int literal (1 when left out).
fn offset(expr: Option<&Expr>) -> SqlResult<String> {
    let Some(expr) = expr else {
        return Ok("1".into());
    };
    match expr {
        Expr::Value(v) => match &v.value {
            sqlparser::ast::Value::Number(n, _) if n.parse::<u32>().is_ok() => Ok(n.clone()),
            _ => Err(SqlError::unsupported(
                "a row offset other than an int literal",
            )),
        },
        _ => Err(SqlError::unsupported(
            "a row offset other than an int literal",
        )),
    }
}

/// An ORDER BY term's direction. Nulls order last in both directions, DuckDB's default;
/// NULLS FIRST is an order term of its own (`lower_call`).
fn descending(term: &OrderByExpr) -> SqlResult<bool> {
    match &term.options.sort {
        Some(OrderBySort::Desc) => Ok(true),
        Some(OrderBySort::Asc) | None => Ok(false),
        Some(OrderBySort::Using(_)) => Err(SqlError::unsupported("ORDER BY … USING")),
    }
}

/// A running aggregate's frame: from the partition's first row to the current row, by
/// rows; SQL's default frame (RANGE, which adds the current row's ties) only when the
/// ORDER BY is written and its rows cannot tie is left to the caller's care: refused here
/// unless ROWS is written.
fn running_frame(spec: &WindowSpec, what: &str) -> SqlResult<()> {
    if spec.order_by.is_empty() {
        return Err(SqlError::unsupported(format!(
            "{what} OVER a whole partition (a running {what} with ORDER BY is; a group's \
             total is a GROUP BY)"
        )));
    }
    let rows_to_current = |frame: &WindowFrame| {
        frame.units == WindowFrameUnits::Rows
            && matches!(frame.start_bound, WindowFrameBound::Preceding(None))
            && matches!(frame.end_bound, None | Some(WindowFrameBound::CurrentRow))
    };
    match &spec.window_frame {
        Some(frame) if rows_to_current(frame) => Ok(()),
        Some(_) => Err(SqlError::unsupported(
            "this window frame (ROWS UNBOUNDED PRECEDING is)",
        )),
        None => Err(SqlError::unsupported(format!(
            "{what} OVER (… ORDER BY …) without a frame: SQL's default (RANGE) adds the \
             current row's ties; write ROWS UNBOUNDED PRECEDING"
        ))),
    }
}
