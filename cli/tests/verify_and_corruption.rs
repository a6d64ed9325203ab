//! Guards exit code 3: a maintained view that differs from its recomputation fails
//! `verify` with the relation and the tuple diff, and a damaged chunk is reported as
//! corruption — never returned as data, never a panic.

mod common;

use common::Shop;
use rnt_merkle::{Commit, State, Tree};
use rnt_store::{Address, ChunkStore, PackStore};

const PROGRAM: &str = "\
relation customers(id: int, plan: str).
relation orders(id: int, customer: int, amount: int).
view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
";

fn shop_with_a_view() -> Shop {
    let shop = Shop::init();
    shop.write("shop.rnt", PROGRAM);
    shop.ok(&["define", "shop.rnt"]);
    shop.commit(
        "data",
        &[
            "+customers(1, \"pro\")",
            "+orders(10, 1, 5)",
            "+orders(11, 1, 7)",
        ],
    );
    shop
}

#[test]
fn verify_passes_on_maintained_views() {
    let shop = shop_with_a_view();
    let out = shop.ok(&["verify"]);
    assert!(out.contains("order_plan"), "{out}");
}

/// Rewrites the head so that `order_plan` holds a tuple its rules do not derive, as a
/// maintenance bug would, and checks that verify catches it.
#[test]
fn verify_reports_a_wrong_view_with_exit_3_and_the_tuple_diff() {
    let shop = shop_with_a_view();
    let bad_commit = {
        let chunks = PackStore::open(&shop.store()).unwrap();
        let nodes = rnt_merkle::NodeStore::new(std::sync::Arc::new(chunks.clone()));
        let db = rnt_db::Database::new(std::sync::Arc::new(chunks.clone()));
        let head = db.head_commit().unwrap().unwrap();
        let commit = Commit::read(&chunks, &head).unwrap();
        let mut state = State::read(&chunks, &commit.state_address()).unwrap();
        let view = state
            .relations
            .iter_mut()
            .find(|r| r.name == "order_plan")
            .unwrap();
        let tree = view.tree().unwrap();
        // order_plan(99, "pro") with derivation count 1.
        let types = [rnt_db::Type::Int, rnt_db::Type::Str];
        let key = rnt_db::tuple::encode_tuple(
            &[rnt_db::Value::Int(99), rnt_db::Value::Str("pro".into())],
            &types,
        )
        .unwrap();
        let wrong: Tree = tree
            .edit(&nodes, vec![(key, Some(1u64.to_le_bytes().to_vec()))])
            .unwrap();
        view.root = Some(*wrong.root().as_bytes());
        view.count = Some(wrong.count(&nodes).unwrap());
        let state_address = state.write(&chunks).unwrap();
        let bad = Commit {
            parents: vec![*head.as_bytes()],
            state: *state_address.as_bytes(),
            message: "bad".into(),
            ..commit
        };
        let id = bad.write(&chunks).unwrap();
        chunks.flush().unwrap();
        id
    };
    // `reset` moves the branch to any stored commit, this one included.
    shop.ok(&["reset", &bad_commit.to_hex()]);
    let run = shop.run(&["verify"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("verify failed: order_plan"), "{run:?}");
    assert!(
        run.stdout.contains("mismatch in order_plan (tuples)"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("order_plan(99, \"pro\"): extra in the maintained view"),
        "{run:?}"
    );
    // The state before is fine.
    shop.ok(&["verify", "--at", "HEAD~1"]);
}

#[test]
fn a_damaged_chunk_is_corruption_with_exit_3() {
    let shop = shop_with_a_view();
    let status = shop.status();
    let root = status["relations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "orders")
        .unwrap()["root"]
        .as_str()
        .unwrap()
        .to_string();
    {
        let chunks = PackStore::open(&shop.store()).unwrap();
        let address = Address::from_hex(&root).unwrap();
        let mut bytes = chunks.get(&address).unwrap().to_vec();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x01;
        assert!(chunks.overwrite_raw_for_test(&address, &bytes).unwrap());
    }
    // Read here: a server running beside (the suite run through one) answers from the
    // nodes it already holds, which are sound.
    let err = shop.fails(&["--no-server", "show", "orders"], 3);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("corrupt"), "{err}");
    assert!(err.contains(&root[..12]), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
