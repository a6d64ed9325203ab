//! A rule body under construction: atoms over fresh variables, equalities that unify
//! variables (so a join is a shared variable, read through an index, never a filter over a
//! product) or bind them to constants, filters and assignments; rendered as rule-language
//! text once every equality is known.

use std::fmt::Write as _;

/// A variable of the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Var(pub usize);

/// An expression over the body's variables, rendered fully parenthesized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ex {
    /// A variable.
    Var(Var),
    /// A constant, as the rule language writes it (`12`, `1.50`, `"a"`, `null`,
    /// `date("2013-01-01")`).
    Lit(String),
    /// `name(arguments)`.
    Call(&'static str, Vec<Ex>),
    /// `(left op right)`: arithmetic, comparisons, `and`, `or`.
    Bin(&'static str, Box<Ex>, Box<Ex>),
    /// `-e`.
    Neg(Box<Ex>),
    /// `not (e)`.
    Not(Box<Ex>),
    /// `e is null` (false) / `e is not null` (true).
    IsNull(Box<Ex>, bool),
    /// `case when c then v … else e end`.
    Case(Vec<(Ex, Ex)>, Option<Box<Ex>>),
    /// `cast(e as T)`, the type as the rule language writes it.
    Cast(Box<Ex>, String),
}

impl Ex {
    /// `left op right`.
    pub fn bin(op: &'static str, left: Ex, right: Ex) -> Ex {
        Ex::Bin(op, Box::new(left), Box::new(right))
    }

    /// The conjunction of `parts` (`true` for none).
    pub fn all(parts: Vec<Ex>) -> Ex {
        parts
            .into_iter()
            .reduce(|a, b| Ex::bin("and", a, b))
            .unwrap_or_else(|| Ex::Lit("true".into()))
    }
}

/// How an atom reads its relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomKind {
    /// A plain atom: a join.
    Plain,
    /// `optional`: a LEFT JOIN.
    Optional,
    /// `not`: an anti-join.
    Negated,
}

#[derive(Clone, Debug)]
struct AtomLit {
    kind: AtomKind,
    relation: String,
    terms: Vec<Option<Var>>,
}

/// A window literal: `result = function(arguments) over (partition … order …)`.
#[derive(Clone, Debug)]
pub struct WindowLit {
    /// The variable holding the function's value.
    pub result: Var,
    /// The rule language's window function (`row_number`, `sum`, `lag`, …).
    pub function: &'static str,
    /// Its arguments: a variable first (sum, lag, lead), then constants.
    pub arguments: Vec<Ex>,
    /// The partition's variables.
    pub partition: Vec<Var>,
    /// The order's variables, each with whether it is descending.
    pub order: Vec<(Var, bool)>,
}

/// The columns a LEFT JOIN's optional atom joined by equality, as SQL sees them: each
/// is the left value where a row matched and null where the row is padded, a variable
/// *assigned* from the atom's sentinel (`from.rs::left_join`). An assigned variable cannot
/// join a later `optional` atom (that atom would bind it, and the assignment would become
/// a filter dropping the padded row), so when one must, the columns are bound instead by an
/// optional atom of their own over the distinct joined values (`Lowerer::bind_padded`).
#[derive(Clone, Debug)]
pub struct PaddedJoin {
    /// The relation the optional atom reads.
    pub relation: String,
    /// Its terms: its columns, and a bag's `_count`.
    pub width: usize,
    /// Each joined column: its position, the atom's term there (the left side's variable,
    /// or a variable bound to a constant), and the variable SQL sees.
    pub columns: Vec<(usize, Var, Var)>,
}

/// A body: its variables (with unification), atoms, filters, assignments and windows.
#[derive(Clone, Debug, Default)]
pub struct Body {
    parent: Vec<usize>,
    constant: Vec<Option<String>>,
    atoms: Vec<AtomLit>,
    filters: Vec<Ex>,
    assignments: Vec<(Var, Ex)>,
    windows: Vec<WindowLit>,
    padded: Vec<PaddedJoin>,
}

impl Body {
    /// A fresh variable.
    pub fn var(&mut self) -> Var {
        self.parent.push(self.parent.len());
        self.constant.push(None);
        Var(self.parent.len() - 1)
    }

    fn find(&self, v: Var) -> usize {
        let mut at = v.0;
        while self.parent[at] != at {
            at = self.parent[at];
        }
        at
    }

    /// `a = b` as one variable. Returns false (and changes nothing) when both hold
    /// different constants: the caller then filters instead.
    pub fn unify(&mut self, a: Var, b: Var) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return true;
        }
        match (&self.constant[ra], &self.constant[rb]) {
            (Some(x), Some(y)) if x != y => return false,
            _ => {}
        }
        let keep = self.constant[ra]
            .clone()
            .or_else(|| self.constant[rb].clone());
        self.parent[rb] = ra;
        self.constant[ra] = keep;
        true
    }

    /// `v = constant`. Returns false when `v` already holds another constant.
    pub fn bind(&mut self, v: Var, constant: &str) -> bool {
        let root = self.find(v);
        match &self.constant[root] {
            Some(existing) => existing == constant,
            None => {
                self.constant[root] = Some(constant.to_string());
                true
            }
        }
    }

    /// The constant `v` is bound to, if any.
    pub fn constant_of(&self, v: Var) -> Option<&str> {
        self.constant[self.find(v)].as_deref()
    }

    /// Whether `a` and `b` are one variable.
    pub fn same(&self, a: Var, b: Var) -> bool {
        self.find(a) == self.find(b)
    }

    /// An atom over `relation`; `None` terms are `_`.
    pub fn atom(&mut self, kind: AtomKind, relation: &str, terms: Vec<Option<Var>>) {
        self.atoms.push(AtomLit {
            kind,
            relation: relation.to_string(),
            terms,
        });
    }

    /// A filter: the literal holds when `condition` is true. A comparison with the null
    /// literal (`null = 1`, from SQL's `NULL IN (1)`) is null, never true: it is written
    /// as a null condition, since the rule language refuses such a comparison as a literal.
    pub fn filter(&mut self, condition: Ex) {
        let compares_with_null = matches!(&condition,
            Ex::Bin(op, left, right)
                if matches!(*op, "=" | "!=" | "<" | "<=" | ">" | ">=")
                    && [left, right].iter().any(|side| matches!(&***side, Ex::Lit(t) if t == "null")));
        let condition = match compares_with_null {
            true => Ex::Case(
                vec![(Ex::Lit("false".into()), Ex::Lit("true".into()))],
                None,
            ),
            false => condition,
        };
        self.filters.push(condition);
    }

    /// `v = value`, `v` a fresh variable.
    pub fn assign(&mut self, v: Var, value: Ex) {
        self.assignments.push((v, value));
    }

    /// Takes back the assignment of `v` (the variable is then bound some other way).
    pub fn take_assignment(&mut self, v: Var) -> Option<Ex> {
        let at = self.assignments.iter().position(|(a, _)| *a == v)?;
        Some(self.assignments.remove(at).1)
    }

    /// Records a LEFT JOIN's joined columns, seen through assignments.
    pub fn padded(&mut self, join: PaddedJoin) {
        if !join.columns.is_empty() {
            self.padded.push(join);
        }
    }

    /// Takes the record of the LEFT JOIN whose seen columns hold one of `vars`, if any.
    pub fn take_padded(&mut self, vars: &[Var]) -> Option<PaddedJoin> {
        let at = self.padded.iter().position(|join| {
            join.columns
                .iter()
                .any(|(_, _, seen)| vars.iter().any(|v| self.same(*v, *seen)))
        })?;
        Some(self.padded.remove(at))
    }

    /// Whether a plain atom reads `v` (so that an equality with it may be a shared
    /// variable without changing which rows an optional atom pads).
    pub fn bound_by_plain(&self, v: Var) -> bool {
        self.atoms
            .iter()
            .filter(|a| a.kind == AtomKind::Plain)
            .flat_map(|a| a.terms.iter().flatten())
            .any(|t| self.same(*t, v))
    }

    /// Whether the rule language would take this body's optional atoms: at most
    /// [`rnt_lang::check::OPTIONAL_ATOMS_MAX`], and an order of them that is no choice —
    /// the language's `check/optional.rs::dependency_order` replayed: in rounds, each atom
    /// meeting a variable bound before the round binds its other variables, and no two
    /// atoms of a round bind one variable first.
    pub fn optional_order_ok(&self) -> bool {
        let variable = |v: &Var| self.constant[self.find(*v)].is_none();
        let vars = |a: &AtomLit| -> Vec<usize> {
            a.terms
                .iter()
                .flatten()
                .filter(|v| variable(v))
                .map(|v| self.find(*v))
                .collect()
        };
        let mut bound: std::collections::BTreeSet<usize> = self
            .atoms
            .iter()
            .filter(|a| a.kind == AtomKind::Plain)
            .flat_map(vars)
            .collect();
        let mut pending: Vec<Vec<usize>> = self
            .atoms
            .iter()
            .filter(|a| a.kind == AtomKind::Optional)
            .map(vars)
            .collect();
        if pending.len() > rnt_lang::check::OPTIONAL_ATOMS_MAX {
            return false;
        }
        while !pending.is_empty() {
            let (ready, rest): (Vec<_>, Vec<_>) = pending
                .into_iter()
                .partition(|atom| atom.iter().any(|v| bound.contains(v)));
            if ready.is_empty() {
                return false;
            }
            // A variable first bound twice, by two atoms or twice by one, is refused.
            let mut claimed: Vec<usize> = Vec::new();
            for &v in ready.iter().flatten().filter(|v| !bound.contains(v)) {
                if claimed.contains(&v) {
                    return false;
                }
                claimed.push(v);
            }
            bound.extend(claimed);
            pending = rest;
        }
        true
    }

    /// Whether an optional atom reads `v`.
    pub fn in_optional_atom(&self, v: Var) -> bool {
        self.atoms
            .iter()
            .filter(|a| a.kind == AtomKind::Optional)
            .flat_map(|a| a.terms.iter().flatten())
            .any(|t| self.same(*t, v))
    }

    /// Whether a plain or optional atom reads `v`.
    pub fn bound_by_atom(&self, v: Var) -> bool {
        self.atom_vars().iter().any(|t| self.same(*t, v))
    }

    /// A window literal.
    pub fn window(&mut self, window: WindowLit) {
        self.windows.push(window);
    }

    /// Whether the body holds a window literal (an aggregating rule may not).
    pub fn has_windows(&self) -> bool {
        !self.windows.is_empty()
    }

    /// Whether the body reads exactly one relation, by one plain atom (as a rule with a
    /// window literal must).
    pub fn single_plain_atom(&self) -> bool {
        matches!(self.atoms.as_slice(), [a] if a.kind == AtomKind::Plain)
    }

    /// Whether the body holds an optional atom (an aggregating rule may not).
    pub fn has_optional(&self) -> bool {
        self.atoms.iter().any(|a| a.kind == AtomKind::Optional)
    }

    /// Every variable of the plain and optional atoms, in order, with repeats.
    pub fn atom_vars(&self) -> Vec<Var> {
        self.atoms
            .iter()
            .filter(|a| a.kind != AtomKind::Negated)
            .flat_map(|a| a.terms.iter().flatten().copied())
            .collect()
    }

    /// The relations and terms of the plain atoms, for uniqueness proofs.
    pub fn plain_atoms(&self) -> Vec<(String, Vec<Option<Var>>)> {
        self.atoms_of(AtomKind::Plain)
    }

    /// The relations and terms of the optional atoms, for uniqueness proofs.
    pub fn optional_atoms(&self) -> Vec<(String, Vec<Option<Var>>)> {
        self.atoms_of(AtomKind::Optional)
    }

    fn atoms_of(&self, kind: AtomKind) -> Vec<(String, Vec<Option<Var>>)> {
        self.atoms
            .iter()
            .filter(|a| a.kind == kind)
            .map(|a| (a.relation.clone(), a.terms.clone()))
            .collect()
    }

    /// A variable's text: its class's constant, or `vN` of its class.
    pub fn name(&self, v: Var) -> String {
        let root = self.find(v);
        match &self.constant[root] {
            Some(constant) => constant.clone(),
            None => format!("v{root}"),
        }
    }

    /// An expression's text.
    pub fn render(&self, ex: &Ex) -> String {
        match ex {
            Ex::Var(v) => self.name(*v),
            Ex::Lit(text) => text.clone(),
            Ex::Call(name, args) => {
                let args: Vec<String> = args.iter().map(|a| self.render(a)).collect();
                format!("{name}({})", args.join(", "))
            }
            Ex::Bin(op, a, b) => format!("({} {op} {})", self.render(a), self.render(b)),
            Ex::Neg(e) => format!("(-{})", self.render(e)),
            Ex::Not(e) => format!("(not {})", self.render(e)),
            Ex::IsNull(e, negated) => {
                let test = if *negated { "is not null" } else { "is null" };
                format!("({} {test})", self.render(e))
            }
            Ex::Case(branches, otherwise) => {
                let mut out = String::from("case");
                for (c, v) in branches {
                    let _ = write!(out, " when {} then {}", self.render(c), self.render(v));
                }
                if let Some(e) = otherwise {
                    let _ = write!(out, " else {}", self.render(e));
                }
                out.push_str(" end");
                format!("({out})")
            }
            Ex::Cast(e, ty) => format!("cast({} as {ty})", self.render(e)),
        }
    }

    fn window_text(&self, window: &WindowLit) -> String {
        let arguments: Vec<String> = window.arguments.iter().map(|a| self.render(a)).collect();
        // A term bound to a constant (by WHERE) orders and partitions nothing: left out.
        let variable = |v: &Var| self.constant[self.find(*v)].is_none();
        let partition: Vec<String> = window
            .partition
            .iter()
            .filter(|v| variable(v))
            .map(|v| self.name(*v))
            .collect();
        let order: Vec<String> = window
            .order
            .iter()
            .filter(|(v, _)| variable(v))
            .map(|(v, descending)| match descending {
                true => format!("{} desc", self.name(*v)),
                false => self.name(*v),
            })
            .collect();
        let order = match order.is_empty() {
            true => String::new(),
            false => format!(" order {}", order.join(", ")),
        };
        format!(
            "{} = {}({}) over (partition {}{order})",
            self.name(window.result),
            window.function,
            arguments.join(", "),
            partition.join(", ")
        )
    }

    /// The body's literals as text, joined by `, `.
    pub fn text(&self) -> String {
        let mut literals = Vec::new();
        for atom in &self.atoms {
            let terms: Vec<String> = atom
                .terms
                .iter()
                .map(|t| t.map_or_else(|| "_".to_string(), |v| self.name(v)))
                .collect();
            let prefix = match atom.kind {
                AtomKind::Plain => "",
                AtomKind::Optional => "optional ",
                AtomKind::Negated => "not ",
            };
            literals.push(format!("{prefix}{}({})", atom.relation, terms.join(", ")));
        }
        for (v, value) in &self.assignments {
            literals.push(format!("{} = {}", self.name(*v), self.render(value)));
        }
        for window in &self.windows {
            literals.push(self.window_text(window));
        }
        for filter in &self.filters {
            // In parentheses, so that a call (`like(…)`) never reads as an atom; a value
            // that is no condition of the rule language (`coalesce(…)`, a variable, a
            // cast) compared with `true`, as SQL's WHERE keeps a row when it is true.
            let text = self.render(filter);
            let condition = match filter {
                Ex::Call(name, _) => matches!(*name, "like" | "ilike"),
                Ex::Var(_) | Ex::Lit(_) | Ex::Cast(..) => false,
                _ => true,
            };
            literals.push(match (condition, text.starts_with('(')) {
                (false, _) => format!("({text}) = true"),
                (true, true) => text,
                (true, false) => format!("({text})"),
            });
        }
        if literals.is_empty() {
            literals.push("true = true".to_string());
        }
        literals.join(", ")
    }
}

/// `rule` with every variable `vN` that occurs once, as an atom's argument, written `_`:
/// the rule reads that column and ignores it, as a hand-written rule would say (which lets
/// the planner count matches instead of reading tuples).
pub fn wildcard_singletons(rule: &str) -> String {
    let bytes = rule.as_bytes();
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let tokens = var_tokens(rule);
    for &(start, end) in &tokens {
        *counts.entry(&rule[start..end]).or_default() += 1;
    }
    let mut out = String::with_capacity(rule.len());
    let mut at = 0;
    for (start, end) in tokens {
        let before = rule[..start].trim_end_matches(' ');
        let after = rule[end..].trim_start_matches(' ');
        let argument = (before.ends_with('(') || before.ends_with(','))
            && (after.starts_with(')') || after.starts_with(','));
        if counts[&rule[start..end]] == 1 && argument {
            out.push_str(&rule[at..start]);
            out.push('_');
            at = end;
        }
    }
    out.push_str(&rule[at..]);
    let _ = bytes;
    out
}

/// The spans of the `vN` variable names in `text` (whole words, outside string literals).
fn var_tokens(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        let word_start = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if c == b'v' && word_start {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            let word_end =
                j == bytes.len() || !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_');
            if j > i + 1 && word_end {
                spans.push((i, j));
                i = j;
                continue;
            }
        }
        i += 1;
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_use_atom_arguments_become_wildcards() {
        assert_eq!(
            wildcard_singletons("a(v0, v4) :- t(v0, v1, v2), s(v1, v4), f(\"v2\")."),
            "a(v0, v4) :- t(v0, v1, _), s(v1, v4), f(\"v2\")."
        );
        assert_eq!(
            wildcard_singletons("a(v9) :- t(v1), v9 = v1 + 1."),
            "a(v9) :- t(v1), v9 = v1 + 1."
        );
    }
}
