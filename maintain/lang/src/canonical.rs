//! The canonical text of a program: what a state stores and hashes, so equal programs give
//! equal state hashes whatever their layout or history.
//!
//! The form:
//! - comments and layout are dropped: one item per line, single spaces as below;
//! - declarations first, sorted by kind (`relation`, `view`, `ephemeral`, `denial`) then by
//!   name; then a blank line; then the rules, sorted by their canonical text (byte order);
//! - a rule's body literals are sorted by their canonical text (their order carries no
//!   meaning); duplicates, of rules or of literals, are kept;
//! - variable names are kept as written, `_` stays `_`; constants are printed as in change
//!   files (ints in decimal, strings as JSON string literals, `true`/`false`);
//! - expressions carry only the parentheses their tree needs.
//!
//! Invariant: `normalize(parse(canonical_text(p))) == normalize(p)`, and `canonical_text`
//! is a function of [`normalize`]'s result, which ignores spans, rule order and literal
//! order. Changing this format changes every state hash: treat it like a storage format.

use crate::syntax::ast::{
    Aggregate, Atom, CmpOp, Comparison, Declaration, Expr, ExprKind, Head, HeadTerm, Ident,
    KeyDecl, Literal, LogicOp, OrderTerm, Program, Rule, Term, TermKind, VarId, Variable, Window,
};
use crate::syntax::Span;
use crate::value::Value;

/// The canonical text of a program (see the module documentation). Every line ends with
/// `\n`; an empty program is the empty string.
pub fn canonical_text(program: &Program) -> String {
    let program = normalize(program);
    let mut out = String::new();
    for declaration in &program.declarations {
        out.push_str(&declaration_text(declaration));
        out.push('\n');
    }
    if !program.declarations.is_empty() && !program.rules.is_empty() {
        out.push('\n');
    }
    for rule in &program.rules {
        out.push_str(&rule_text(rule));
        out.push('\n');
    }
    out
}

/// The program in canonical order, with every span set to `Span::default()` and each rule's
/// variables renumbered in order of first occurrence in that order (as the parser numbers
/// them). Two programs differing only in layout, comments, rule order and literal order
/// normalize to equal values.
pub fn normalize(program: &Program) -> Program {
    let mut declarations: Vec<(String, Declaration)> = program
        .declarations
        .iter()
        .map(|d| {
            let d = normalize_declaration(d);
            (declaration_text(&d), d)
        })
        .collect();
    // `RelationKind`'s order is the listing order; the text breaks ties between duplicate
    // names (only in unchecked programs) so the result never depends on input order.
    declarations
        .sort_by(|(ta, a), (tb, b)| (a.kind, &a.name.name, ta).cmp(&(b.kind, &b.name.name, tb)));
    let mut rules: Vec<(String, Rule)> = program
        .rules
        .iter()
        .map(|rule| {
            let rule = normalize_rule(rule);
            (rule_text(&rule), rule)
        })
        .collect();
    rules.sort_by(|a, b| a.0.cmp(&b.0));
    Program {
        declarations: declarations.into_iter().map(|(_, d)| d).collect(),
        rules: rules.into_iter().map(|(_, r)| r).collect(),
    }
}

/// `kind name(attribute: type, ...).`, or `kind name(attribute: type, ...) key(a, ...).`
/// for a keyed relation, the key's attributes in declaration order (a key is a set of
/// attributes: `key(b, a)` and `key(a, b)` are one key). A declaration without a key reads
/// exactly as it did before keys existed, so unkeyed programs keep their state hashes; an
/// attribute with a default reads `name: type default value` (the value as a change file
/// writes it), one without reads as before defaults existed.
pub fn declaration_text(declaration: &Declaration) -> String {
    let attributes: Vec<String> = declaration
        .attributes
        .iter()
        .map(|a| match &a.default {
            None => format!("{}: {}", a.name.name, a.column_type()),
            Some(v) => format!("{}: {} default {v}", a.name.name, a.column_type()),
        })
        .collect();
    let key = match &declaration.key {
        None => String::new(),
        Some(key) => {
            let columns: Vec<&str> = key_in_declaration_order(declaration, key)
                .into_iter()
                .map(|c| c.name.as_str())
                .collect();
            format!(" key({})", columns.join(", "))
        }
    };
    format!(
        "{} {}({}){key}.",
        declaration.kind,
        declaration.name.name,
        attributes.join(", ")
    )
}

/// A key's names sorted by their attribute's position; names that are no attribute (only in
/// unchecked programs) go last, in byte order, so the order never depends on the input's.
fn key_in_declaration_order<'k>(declaration: &Declaration, key: &'k KeyDecl) -> Vec<&'k Ident> {
    let position = |name: &str| {
        declaration
            .attributes
            .iter()
            .position(|a| a.name.name == name)
            .unwrap_or(usize::MAX)
    };
    let mut columns: Vec<&Ident> = key.columns.iter().collect();
    columns.sort_by(|a, b| (position(&a.name), &a.name).cmp(&(position(&b.name), &b.name)));
    columns
}

/// `head :- literal, ... .` with the literals in the rule's own order (canonical after
/// [`normalize`]).
pub fn rule_text(rule: &Rule) -> String {
    let body: Vec<String> = rule.body.iter().map(|l| literal_text(rule, l)).collect();
    format!("{} :- {}.", head_text(rule, &rule.head), body.join(", "))
}

/// The text of a head.
pub fn head_text(rule: &Rule, head: &Head) -> String {
    let terms: Vec<String> = head
        .terms
        .iter()
        .map(|term| match term {
            HeadTerm::Term(term) => term_text(rule, term),
            HeadTerm::Aggregate(aggregate) => aggregate_text(rule, aggregate),
        })
        .collect();
    format!("{}({})", head.relation.name, terms.join(", "))
}

/// The text of a head aggregate: `sum(x)`, `count()`, `concat(x, ", ")`.
pub fn aggregate_text(rule: &Rule, aggregate: &Aggregate) -> String {
    let argument = aggregate.argument.map_or("", |v| rule.variable_name(v.id));
    match &aggregate.separator {
        // The separator as the language writes a string literal (escaped as constants are).
        Some(separator) => format!(
            "{}({argument}, {})",
            aggregate.function.name(),
            Value::Str(separator.clone())
        ),
        None => format!("{}({argument})", aggregate.function.name()),
    }
}

/// The text of a body literal.
pub fn literal_text(rule: &Rule, literal: &Literal) -> String {
    match literal {
        Literal::Positive(atom) => atom_text(rule, atom),
        Literal::Negative { atom, .. } => format!("not {}", atom_text(rule, atom)),
        Literal::Optional { atom, .. } => format!("optional {}", atom_text(rule, atom)),
        // A condition tested is parenthesized: `(a > 3) is not null` (without, the text
        // reads back as `a > (3 is not null)`, and the stored program would not compile).
        Literal::IsNull { expr, negated, .. } => {
            let tested = match expr.is_condition() {
                true => format!("({})", expr_text(rule, expr)),
                false => expr_text(rule, expr),
            };
            format!("{tested} is {}null", if *negated { "not " } else { "" })
        }
        // A condition filter is written as it was parsed, in parentheses: `(x > 1 or y is
        // null)`, `(like(s, "a%"))` (unparenthesized, `like(…)` would read as an atom).
        Literal::Comparison(c) if is_filter(c) => format!("({})", expr_text(rule, &c.left)),
        Literal::Comparison(c) => {
            format!(
                "{} {} {}",
                operand_text(rule, &c.left),
                c.op.symbol(),
                operand_text(rule, &c.right)
            )
        }
        Literal::Window(window) => window_text(rule, window),
    }
}

/// The text of a window literal: `k = rank() over (partition p order a desc)`; `partition`
/// and `order` are left out when their list is empty (`over ()` when both are).
pub fn window_text(rule: &Rule, window: &Window) -> String {
    let mut arguments = Vec::new();
    if let Some(argument) = window.argument {
        arguments.push(rule.variable_name(argument.id).to_string());
    }
    if let Some(offset) = window.offset {
        arguments.push(offset.to_string());
    }
    if let Some(default) = &window.default {
        arguments.push(term_text(rule, default));
    }
    let mut over = Vec::new();
    if !window.partition.is_empty() {
        let names: Vec<&str> = window
            .partition
            .iter()
            .map(|v| rule.variable_name(v.id))
            .collect();
        over.push(format!("partition {}", names.join(", ")));
    }
    if !window.order.is_empty() {
        let terms: Vec<String> = window
            .order
            .iter()
            .map(|term| {
                let name = rule.variable_name(term.variable.id);
                if term.descending {
                    format!("{name} desc")
                } else {
                    name.to_string()
                }
            })
            .collect();
        over.push(format!("order {}", terms.join(", ")));
    }
    format!(
        "{} = {}({}) over ({})",
        rule.variable_name(window.result.id),
        window.function.name(),
        arguments.join(", "),
        over.join(" ")
    )
}

/// The text of an atom: positional, or named (`flights(carrier: c, arr_delay: a)`, the
/// columns not named left out; the first written as `_` when every one is).
pub fn atom_text(rule: &Rule, atom: &Atom) -> String {
    let Some(names) = &atom.names else {
        let terms: Vec<String> = atom.terms.iter().map(|t| term_text(rule, t)).collect();
        return format!("{}({})", atom.relation.name, terms.join(", "));
    };
    let mut terms: Vec<String> = names
        .iter()
        .zip(&atom.terms)
        .filter(|(_, term)| term.kind != TermKind::Wildcard)
        .map(|(name, term)| format!("{}: {}", name.name, term_text(rule, term)))
        .collect();
    if terms.is_empty() {
        if let Some(first) = names.first() {
            terms.push(format!("{}: _", first.name));
        }
    }
    format!("{}({})", atom.relation.name, terms.join(", "))
}

/// The text of a term.
pub fn term_text(rule: &Rule, term: &Term) -> String {
    match &term.kind {
        TermKind::Var(var) => rule.variable_name(*var).to_string(),
        TermKind::Wildcard => "_".to_string(),
        TermKind::Const(value) => value.to_string(),
    }
}

/// Whether a comparison is a condition filter, `c = true` as the parser makes it of a
/// body literal such as `(x > 1 or y is null)`.
fn is_filter(c: &Comparison) -> bool {
    c.op == CmpOp::Eq
        && c.right.kind == ExprKind::Const(Value::Bool(true))
        && (c.left.is_condition() || matches!(c.left.kind, ExprKind::Case { .. }))
}

/// The text of an expression, with the parentheses its tree needs and no others.
pub fn expr_text(rule: &Rule, expr: &Expr) -> String {
    let mut out = String::new();
    write_expr(&mut out, rule, expr);
    out
}

/// An operand of a comparison: a condition in parentheses.
fn operand_text(rule: &Rule, expr: &Expr) -> String {
    let mut out = String::new();
    write_operand(&mut out, rule, expr, expr.is_condition());
    out
}

/// How tightly a condition binds (`or` loosest); `None` for an expression that is not a
/// condition (arithmetic, calls and the like bind tighter than any).
fn condition_strength(expr: &Expr) -> Option<u8> {
    match &expr.kind {
        ExprKind::Logic {
            op: LogicOp::Or, ..
        } => Some(1),
        ExprKind::Logic { .. } => Some(2),
        ExprKind::Not(_) => Some(3),
        ExprKind::Compare { .. } | ExprKind::IsNull { .. } => Some(4),
        _ => None,
    }
}

/// Writes the conditions and the `case`/`cast` forms (the rest is arithmetic).
fn write_condition(out: &mut String, rule: &Rule, expr: &Expr) {
    match &expr.kind {
        ExprKind::Logic { op, left, right } => {
            let strength = condition_strength(expr).unwrap_or(u8::MAX);
            let weaker = |e: &Expr, or_equal: bool| {
                condition_strength(e).is_some_and(|s| s < strength || (or_equal && s == strength))
            };
            write_operand(out, rule, left, weaker(left, false));
            out.push(' ');
            out.push_str(op.word());
            out.push(' ');
            write_operand(out, rule, right, weaker(right, true));
        }
        // Always `not (…)`: `not x` at the start of a literal reads as a negated atom.
        ExprKind::Not(inner) => {
            out.push_str("not ");
            write_operand(out, rule, inner, true);
        }
        ExprKind::Compare { op, left, right } => {
            write_operand(out, rule, left, left.is_condition());
            out.push(' ');
            out.push_str(op.symbol());
            out.push(' ');
            write_operand(out, rule, right, right.is_condition());
        }
        ExprKind::IsNull {
            expr: inner,
            negated,
        } => {
            write_operand(out, rule, inner, inner.is_condition());
            out.push_str(if *negated { " is not null" } else { " is null" });
        }
        ExprKind::Case {
            branches,
            otherwise,
        } => {
            out.push_str("case");
            for (condition, value) in branches {
                out.push_str(" when ");
                write_expr(out, rule, condition);
                out.push_str(" then ");
                write_expr(out, rule, value);
            }
            if let Some(otherwise) = otherwise {
                out.push_str(" else ");
                write_expr(out, rule, otherwise);
            }
            out.push_str(" end");
        }
        ExprKind::Cast { expr: inner, to } => {
            out.push_str("cast(");
            write_expr(out, rule, inner);
            out.push_str(" as ");
            out.push_str(&to.name());
            out.push(')');
        }
        _ => unreachable!("only conditions, `case` and `cast` are written here"),
    }
}

fn write_expr(out: &mut String, rule: &Rule, expr: &Expr) {
    match &expr.kind {
        ExprKind::Logic { .. }
        | ExprKind::Not(_)
        | ExprKind::Compare { .. }
        | ExprKind::IsNull { .. }
        | ExprKind::Case { .. }
        | ExprKind::Cast { .. } => write_condition(out, rule, expr),
        ExprKind::Var(var) => out.push_str(rule.variable_name(*var)),
        ExprKind::Const(value) => out.push_str(&value.to_string()),
        // `-x` for a variable; otherwise `-(...)`, since `-5` would read back as a constant.
        ExprKind::Neg(inner) => {
            out.push('-');
            let parenthesize = !matches!(inner.kind, ExprKind::Var(_));
            write_operand(out, rule, inner, parenthesize);
        }
        ExprKind::Call { function, args } => {
            out.push_str(function.name());
            out.push('(');
            for (i, arg) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_expr(out, rule, arg);
            }
            out.push(')');
        }
        ExprKind::Binary { op, left, right } => {
            // Left-associative: a left operand needs parentheses only when it binds more
            // loosely, a right operand also when it binds equally (`a - (b - c)`).
            let binds = |e: &Expr| match &e.kind {
                ExprKind::Binary { op, .. } => op.precedence(),
                _ if e.is_condition() => 0,
                _ => u8::MAX,
            };
            write_operand(out, rule, left, binds(left) < op.precedence());
            out.push(' ');
            out.push_str(op.symbol());
            out.push(' ');
            write_operand(out, rule, right, binds(right) <= op.precedence());
        }
    }
}

fn write_operand(out: &mut String, rule: &Rule, expr: &Expr, parenthesize: bool) {
    if parenthesize {
        out.push('(');
    }
    write_expr(out, rule, expr);
    if parenthesize {
        out.push(')');
    }
}

fn normalize_declaration(declaration: &Declaration) -> Declaration {
    let mut declaration = declaration.clone();
    declaration.span = Span::default();
    declaration.name.span = Span::default();
    for attribute in &mut declaration.attributes {
        attribute.name.span = Span::default();
        attribute.ty_span = Span::default();
    }
    if let Some(key) = &declaration.key {
        let columns = key_in_declaration_order(&declaration, key)
            .into_iter()
            .map(|c| Ident {
                name: c.name.clone(),
                span: Span::default(),
            })
            .collect();
        declaration.key = Some(KeyDecl {
            columns,
            span: Span::default(),
        });
    }
    declaration
}

/// Sorts the body, erases spans and renumbers variables in first-occurrence order.
fn normalize_rule(rule: &Rule) -> Rule {
    let mut body: Vec<(String, &Literal)> = rule
        .body
        .iter()
        .map(|l| (literal_text(rule, l), l))
        .collect();
    body.sort_by(|a, b| a.0.cmp(&b.0));
    let mut renumber = Renumber {
        rule,
        new_ids: vec![None; rule.variables.len()],
        names: Vec::new(),
    };
    let head = Head {
        names: None,
        relation: renumber.ident(&rule.head.relation),
        terms: rule
            .head
            .terms
            .iter()
            .map(|term| match term {
                HeadTerm::Term(term) => HeadTerm::Term(renumber.term(term)),
                HeadTerm::Aggregate(aggregate) => HeadTerm::Aggregate(Aggregate {
                    function: aggregate.function,
                    argument: aggregate.argument.map(|v| renumber.variable(v)),
                    separator: aggregate.separator.clone(),
                    span: Span::default(),
                }),
            })
            .collect(),
        span: Span::default(),
    };
    let body = body
        .into_iter()
        .map(|(_, literal)| renumber.literal(literal))
        .collect();
    Rule {
        head,
        body,
        variables: renumber.names,
        span: Span::default(),
    }
}

/// Rebuilds a rule's parts with spans erased and variables numbered as first met.
struct Renumber<'r> {
    rule: &'r Rule,
    new_ids: Vec<Option<VarId>>,
    names: Vec<String>,
}

impl Renumber<'_> {
    fn var(&mut self, old: VarId) -> VarId {
        if let Some(new) = self.new_ids[old.index()] {
            return new;
        }
        let new = VarId(
            u32::try_from(self.names.len()).expect("a rule has far fewer than 2^32 variables"),
        );
        self.names.push(self.rule.variable_name(old).to_string());
        self.new_ids[old.index()] = Some(new);
        new
    }

    fn variable(&mut self, variable: Variable) -> Variable {
        Variable {
            id: self.var(variable.id),
            span: Span::default(),
        }
    }

    fn ident(&mut self, ident: &Ident) -> Ident {
        Ident {
            name: ident.name.clone(),
            span: Span::default(),
        }
    }

    fn term(&mut self, term: &Term) -> Term {
        let kind = match &term.kind {
            TermKind::Var(var) => TermKind::Var(self.var(*var)),
            other => other.clone(),
        };
        Term {
            kind,
            span: Span::default(),
        }
    }

    fn atom(&mut self, atom: &Atom) -> Atom {
        Atom {
            relation: self.ident(&atom.relation),
            terms: atom.terms.iter().map(|t| self.term(t)).collect(),
            names: atom
                .names
                .as_ref()
                .map(|names| names.iter().map(|n| self.ident(n)).collect()),
            span: Span::default(),
        }
    }

    fn literal(&mut self, literal: &Literal) -> Literal {
        match literal {
            Literal::Positive(atom) => Literal::Positive(self.atom(atom)),
            Literal::Negative { atom, .. } => Literal::Negative {
                atom: self.atom(atom),
                span: Span::default(),
            },
            Literal::Optional { atom, .. } => Literal::Optional {
                atom: self.atom(atom),
                span: Span::default(),
            },
            Literal::IsNull { expr, negated, .. } => Literal::IsNull {
                expr: self.expr(expr),
                negated: *negated,
                span: Span::default(),
            },
            Literal::Comparison(c) => Literal::Comparison(Comparison {
                left: self.expr(&c.left),
                op: c.op,
                right: self.expr(&c.right),
                span: Span::default(),
            }),
            // Variables are met in the order the text writes them.
            Literal::Window(w) => Literal::Window(Window {
                result: self.variable(w.result),
                function: w.function,
                argument: w.argument.map(|v| self.variable(v)),
                offset: w.offset,
                default: w.default.as_ref().map(|t| self.term(t)),
                partition: w.partition.iter().map(|v| self.variable(*v)).collect(),
                order: w
                    .order
                    .iter()
                    .map(|t| OrderTerm {
                        variable: self.variable(t.variable),
                        descending: t.descending,
                    })
                    .collect(),
                span: Span::default(),
            }),
        }
    }

    fn expr(&mut self, expr: &Expr) -> Expr {
        let kind = match &expr.kind {
            ExprKind::Var(var) => ExprKind::Var(self.var(*var)),
            ExprKind::Const(value) => ExprKind::Const(value.clone()),
            ExprKind::Neg(inner) => ExprKind::Neg(Box::new(self.expr(inner))),
            ExprKind::Binary { op, left, right } => ExprKind::Binary {
                op: *op,
                left: Box::new(self.expr(left)),
                right: Box::new(self.expr(right)),
            },
            ExprKind::Call { function, args } => ExprKind::Call {
                function: *function,
                args: args.iter().map(|a| self.expr(a)).collect(),
            },
            ExprKind::Compare { op, left, right } => ExprKind::Compare {
                op: *op,
                left: Box::new(self.expr(left)),
                right: Box::new(self.expr(right)),
            },
            ExprKind::Logic { op, left, right } => ExprKind::Logic {
                op: *op,
                left: Box::new(self.expr(left)),
                right: Box::new(self.expr(right)),
            },
            ExprKind::Not(inner) => ExprKind::Not(Box::new(self.expr(inner))),
            ExprKind::IsNull { expr, negated } => ExprKind::IsNull {
                expr: Box::new(self.expr(expr)),
                negated: *negated,
            },
            ExprKind::Case {
                branches,
                otherwise,
            } => ExprKind::Case {
                branches: (branches.iter())
                    .map(|(c, v)| (self.expr(c), self.expr(v)))
                    .collect(),
                otherwise: otherwise.as_ref().map(|e| Box::new(self.expr(e))),
            },
            ExprKind::Cast { expr, to } => ExprKind::Cast {
                expr: Box::new(self.expr(expr)),
                to: *to,
            },
        };
        Expr {
            kind,
            span: Span::default(),
        }
    }
}
