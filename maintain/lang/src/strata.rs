//! Strata: the strongly connected components of the dependency graph of derived relations, in
//! the order they must be computed (dependencies first).
//!
//! Only derived relations are nodes: a base relation has no rules, so it is never part of a
//! cycle and is simply available before every stratum. An edge runs from a rule's head to
//! each derived relation its body reads (positively or under `not`).
//!
//! Determinism: nodes are visited in name order and each node's dependencies in name order,
//! so the strata and their order are a function of the graph alone (never of a hash map's
//! iteration order). Components come out of Tarjan's algorithm, which emits a component only
//! after every component it depends on: that emission order is the stratum order.

use std::collections::{BTreeMap, BTreeSet};

/// A set of relations computed together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stratum {
    /// The relations, in name order.
    pub relations: Vec<String>,
    /// Whether the relations depend on themselves (a cycle, or a rule reading its own head):
    /// such a stratum needs a fixpoint (semi-naive evaluation, DRed maintenance).
    pub recursive: bool,
}

/// The strata of a program, dependencies first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Strata {
    /// The strata in evaluation order: every relation a stratum reads from another stratum
    /// is in an earlier one.
    pub strata: Vec<Stratum>,
    /// The stratum index of each relation.
    index: BTreeMap<String, usize>,
    /// The strata each stratum reads directly (other than itself), in index order.
    reads: Vec<Vec<usize>>,
}

impl Strata {
    /// The index in [`Strata::strata`] of a relation's stratum; `None` for a relation that is
    /// not a node (a base relation, or an unknown name).
    pub fn stratum_of(&self, relation: &str) -> Option<usize> {
        self.index.get(relation).copied()
    }

    /// Whether two relations are in the same stratum (so each depends on the other).
    pub fn same_stratum(&self, a: &str, b: &str) -> bool {
        match (self.stratum_of(a), self.stratum_of(b)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    }

    /// Whether a relation's stratum is recursive (it depends on itself).
    pub fn is_recursive(&self, relation: &str) -> bool {
        self.stratum_of(relation)
            .is_some_and(|i| self.strata[i].recursive)
    }

    /// Iterates the strata in evaluation order.
    pub fn iter(&self) -> impl Iterator<Item = &Stratum> {
        self.strata.iter()
    }

    /// The strata grouped into waves that may be computed at the same time: a stratum's
    /// wave is one past the latest wave of a stratum it reads (0 when it reads only base
    /// relations), so no stratum reads another of its wave or a later one. Each wave lists
    /// its strata's indexes in evaluation order, and the waves, concatenated, are an
    /// evaluation order too.
    pub fn waves(&self) -> Vec<Vec<usize>> {
        let mut wave_of = vec![0usize; self.strata.len()];
        let mut waves: Vec<Vec<usize>> = Vec::new();
        for (index, reads) in self.reads.iter().enumerate() {
            debug_assert!(
                reads.iter().all(|&r| r < index),
                "strata read earlier strata"
            );
            let wave = reads.iter().map(|&r| wave_of[r] + 1).max().unwrap_or(0);
            wave_of[index] = wave;
            if waves.len() <= wave {
                waves.resize_with(wave + 1, Vec::new);
            }
            waves[wave].push(index);
        }
        waves
    }
}

/// Computes the strata of a dependency graph given as each node's dependencies. The nodes
/// are the map's keys; a dependency that is not a key (a base relation) is ignored.
pub fn stratify(graph: &BTreeMap<String, BTreeSet<String>>) -> Strata {
    let names: Vec<&String> = graph.keys().collect();
    let node = |name: &String| names.binary_search(&name).ok();
    // Dependencies by node index, in name order (keys are sorted, so indexes are too).
    let edges: Vec<Vec<usize>> = graph
        .values()
        .map(|deps| deps.iter().filter_map(node).collect())
        .collect();

    let mut strata = Strata::default();
    for component in tarjan(&edges) {
        let recursive = component.len() > 1 || edges[component[0]].contains(&component[0]);
        let index = strata.strata.len();
        let relations: Vec<String> = component.iter().map(|&n| names[n].clone()).collect();
        for relation in &relations {
            strata.index.insert(relation.clone(), index);
        }
        strata.strata.push(Stratum {
            relations,
            recursive,
        });
    }
    // Tarjan emits a component after every component it reaches, so each stratum's reads
    // are at lower indexes.
    let reads: Vec<Vec<usize>> = strata
        .strata
        .iter()
        .enumerate()
        .map(|(index, stratum)| {
            let read: BTreeSet<usize> = stratum
                .relations
                .iter()
                .flat_map(|name| &graph[name])
                .filter_map(|dep| strata.index.get(dep).copied())
                .filter(|&dep| dep != index)
                .collect();
            read.into_iter().collect()
        })
        .collect();
    strata.reads = reads;
    strata
}

/// Tarjan's strongly connected components, iteratively (a long chain of relations must not
/// overflow the stack). Returns components in emission order — each after all components it
/// reaches — with members sorted.
fn tarjan(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNVISITED: usize = usize::MAX;
    let n = edges.len();
    let mut order = vec![UNVISITED; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut next_order = 0;
    // Each frame: a node and how many of its edges have been followed.
    let mut frames: Vec<(usize, usize)> = Vec::new();

    for root in 0..n {
        if order[root] != UNVISITED {
            continue;
        }
        frames.push((root, 0));
        order[root] = next_order;
        low[root] = next_order;
        next_order += 1;
        stack.push(root);
        on_stack[root] = true;

        while let Some(frame) = frames.last_mut() {
            let (v, followed) = *frame;
            if let Some(&w) = edges[v].get(followed) {
                frame.1 += 1;
                if order[w] == UNVISITED {
                    order[w] = next_order;
                    low[w] = next_order;
                    next_order += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    frames.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                let mut component = Vec::new();
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                component.sort_unstable();
                components.push(component);
            }
        }
    }
    components
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
        edges
            .iter()
            .map(|(node, deps)| {
                (
                    node.to_string(),
                    deps.iter().map(|d| d.to_string()).collect(),
                )
            })
            .collect()
    }

    fn render(strata: &Strata) -> Vec<String> {
        strata
            .iter()
            .map(|s| {
                format!(
                    "{}{}",
                    s.relations.join(" "),
                    if s.recursive { " (rec)" } else { "" }
                )
            })
            .collect()
    }

    #[test]
    fn dependencies_come_first() {
        let g = graph(&[
            ("top", &["mid", "base"]),
            ("mid", &["a"]),
            ("a", &["b"]),
            ("b", &["a", "leaf"]),
            ("leaf", &[]),
            ("self_loop", &["self_loop"]),
        ]);
        let strata = stratify(&g);
        assert_eq!(
            render(&strata),
            ["leaf", "a b (rec)", "mid", "self_loop (rec)", "top"]
        );
        assert!(strata.same_stratum("a", "b"));
        assert_eq!(strata.stratum_of("base"), None);
    }

    #[test]
    fn waves_hold_strata_that_do_not_read_each_other() {
        let g = graph(&[
            ("top", &["mid", "base"]),
            ("mid", &["a"]),
            ("a", &["b"]),
            ("b", &["a", "leaf"]),
            ("leaf", &[]),
            ("self_loop", &["self_loop"]),
            ("side", &["leaf"]),
        ]);
        let strata = stratify(&g);
        let names = |wave: &Vec<usize>| -> Vec<String> {
            wave.iter()
                .map(|&i| strata.strata[i].relations.join(" "))
                .collect()
        };
        let waves: Vec<Vec<String>> = strata.waves().iter().map(names).collect();
        assert_eq!(
            waves,
            [
                vec!["leaf", "self_loop"],
                vec!["a b", "side"],
                vec!["mid"],
                vec!["top"]
            ]
        );
        // Every stratum once, and none reads one of its own wave or a later one.
        let mut seen: Vec<usize> = strata.waves().concat();
        seen.sort_unstable();
        assert_eq!(seen, (0..strata.strata.len()).collect::<Vec<_>>());
    }

    #[test]
    fn long_chains_do_not_overflow() {
        let names: Vec<String> = (0..100_000).map(|i| format!("r{i:06}")).collect();
        let mut g = BTreeMap::new();
        for (i, name) in names.iter().enumerate() {
            let deps = names.get(i + 1).into_iter().cloned().collect();
            g.insert(name.clone(), deps);
        }
        let strata = stratify(&g);
        assert_eq!(strata.strata.len(), names.len());
        assert_eq!(strata.strata[0].relations, [names[names.len() - 1].clone()]);
    }
}
