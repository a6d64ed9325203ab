//! Ad-hoc queries: rules written on the command line, evaluated against any state. Their
//! head relations need no declaration: a head's column types are inferred from the body
//! (the attribute a variable is read from, an assignment's expression, an aggregate), and
//! the relation is evaluated as an ephemeral one. The first rule's head is the answer.

use crate::eval::engine::Engine;
use crate::eval::plans::plan_program;
use crate::{EngineError, EngineResult};
use rnt_lang::check::{compile, infer_head_declarations, Program};
use rnt_lang::diagnostic::{render_all, Source};
use rnt_lang::schema::RelationSchema;
use rnt_lang::syntax::parse;
use rnt_lang::tuple::Tuple;
use rnt_merkle::{NodeStore, RelationEntry};

/// The answer to a query: the first head's schema and its tuples in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryAnswer {
    /// The answering relation's schema (inferred when it was not declared).
    pub schema: RelationSchema,
    /// Its tuples, in tuple order.
    pub tuples: Vec<Tuple>,
}

/// A state as a query reads it: its checked program, that program's text, and its
/// relations' entries.
pub struct QueryState<'s> {
    /// The state's program, checked.
    pub program: &'s Program,
    /// The state's program text (canonical).
    pub text: &'s str,
    /// The state's relation entries.
    pub relations: &'s [RelationEntry],
    /// The state's clock, which `now` reads (`None`: the state's program does not mention
    /// `now`, and a query that does is refused).
    pub clock: Option<i64>,
}

/// Evaluates the rules of `text` against `state`.
pub fn query(nodes: &NodeStore, state: &QueryState<'_>, text: &str) -> EngineResult<QueryAnswer> {
    let parsed = parse(text);
    let source = Source::new("query", text);
    if !parsed.diagnostics.is_empty() {
        return Err(EngineError::Program {
            rendered: render_all(&parsed.diagnostics, &source),
            errors: parsed.diagnostics.len(),
        });
    }
    let first = parsed
        .program
        .rules
        .first()
        .map(|rule| rule.head.relation.name.clone())
        .ok_or_else(|| {
            EngineError::user("query: write at least one rule, e.g. `q(x) :- orders(x, _, _).`")
        })?;
    let known = state
        .program
        .relations
        .iter()
        .map(|(name, r)| (name.clone(), r.declaration.clone()))
        .collect();
    let declarations = infer_head_declarations(&parsed.program, &known);
    // The query first, so diagnostics point into it; then the inferred declarations and
    // the state's program.
    let combined = format!("{text}\n{}{}", declarations.text, state.text);
    let program = compile(&combined).map_err(|diagnostics| EngineError::Program {
        rendered: render_all(&diagnostics, &Source::new("query", combined.clone())),
        errors: diagnostics.len(),
    })?;
    // Checking reports an unsafe variable or an unknown relation with its span; a column
    // whose type is still unknown after that is reported as such.
    if let Some(message) = declarations.uninferred {
        return Err(EngineError::user(message));
    }
    let relation = program
        .relation(&first)
        .ok_or_else(|| EngineError::user(format!("query: `{first}` is not a relation")))?;
    let schema = relation.declaration.schema();
    let plans = plan_program(&program);
    let engine = Engine::new(nodes, &program, &plans, state.relations).with_clock(state.clock);
    let tuples = engine.evaluate_once(&first)?;
    Ok(QueryAnswer { schema, tuples })
}
