//! Pins the node format and the chunker: exact node bytes with their BLAKE3 addresses,
//! boundary hashes and thresholds, and root addresses of fixed data sets. A change to any
//! of these changes every address rnt has ever written, so it must fail loudly here (and
//! come with a new format version).

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

mod common;

use common::memory_nodes;
use rnt_merkle::chunker::{boundary_hash, split_threshold};
use rnt_merkle::codec::ChildRef;
use rnt_merkle::{Node, Tree};
use rnt_store::Address;
use std::sync::Arc;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Builds a tree and returns its root node's bytes (for single-node trees).
fn root_bytes(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
    let (nodes, _) = memory_nodes();
    let tree = Tree::build(&nodes, entries.iter().copied()).unwrap();
    nodes.read(&tree.root()).unwrap().bytes().to_vec()
}

#[test]
fn empty_leaf_bytes_and_address() {
    let bytes = root_bytes(&[]);
    assert_eq!(hex(&bytes), "0100000000000000000000000000");
    assert_eq!(
        Address::of(&bytes).to_hex(),
        "ccea657309e075a1dca465d75fd82e54dbf6936c0647ddee05fcaa045c4e70fb"
    );
}

#[test]
fn small_leaf_bytes_and_address() {
    let bytes = root_bytes(&[(b"a", b"1"), (b"bc", b"")]);
    // version 1, level 0, n = 2, key offsets 0 1 3, value offsets 0 1 1, "abc", "1"
    assert_eq!(
        hex(&bytes),
        concat!(
            "01", "00", "02000000", "00000000", "01000000", "03000000", "00000000", "01000000",
            "01000000", "616263", "31"
        )
    );
    assert_eq!(
        Address::of(&bytes).to_hex(),
        "1566935c87c15b7a2711ed4af3a259f8d2584528454355759c3ae2a7e9d786b1"
    );
}

#[test]
fn internal_node_layout_decodes() {
    let child = ChildRef {
        address: Address::of(b"child"),
        count: 7,
    };
    let encoded = child.encode();
    assert_eq!(encoded.len(), 40);
    assert_eq!(&encoded[32..], &7u64.to_le_bytes());
    assert_eq!(ChildRef::decode(&encoded), Some(child));
    // A hand-assembled internal node with two children.
    let mut bytes = vec![1u8, 1, 2, 0, 0, 0];
    for offset in [0u32, 1, 2, 0, 40, 80] {
        bytes.extend_from_slice(&offset.to_le_bytes());
    }
    bytes.extend_from_slice(b"mz");
    bytes.extend_from_slice(&encoded);
    bytes.extend_from_slice(
        &ChildRef {
            address: Address::of(b"other"),
            count: 5,
        }
        .encode(),
    );
    let node = Node::decode(Address::of(&bytes), Arc::from(bytes.as_slice())).unwrap();
    assert_eq!(node.level(), 1);
    assert_eq!(node.subtree_count(), 12);
    assert_eq!(node.key(1), b"z");
    assert_eq!(node.child(0), child);
}

#[test]
fn boundary_hash_and_threshold_are_pinned() {
    assert_eq!(boundary_hash(0, b""), 1131261854);
    assert_eq!(boundary_hash(0, b"key-00000001"), 3_099_951_570);
    assert_eq!(boundary_hash(1, b"key-00000001"), 1_972_372_490);
    assert_eq!(split_threshold(4096, 32), 90_590_010);
    assert_eq!(split_threshold(512, 100), 552_917);
    assert_eq!(split_threshold(16_000, 4_000), 1 << 32);
}

fn root_of(entries: impl Iterator<Item = (Vec<u8>, Vec<u8>)>) -> (String, u32) {
    let (nodes, _) = memory_nodes();
    let tree = Tree::build(&nodes, entries).unwrap();
    (tree.root().to_hex(), tree.depth(&nodes).unwrap())
}

#[test]
fn root_of_100k_sequential_keys_is_pinned() {
    let (root, depth) = root_of(
        (0u32..100_000).map(|i| (format!("key-{i:08}").into_bytes(), i.to_le_bytes().to_vec())),
    );
    assert_eq!(
        (root.as_str(), depth),
        (
            "8798ebfe9f72dd77ed42ec8bfab516aeca78f8fa878edfbfd17bd30e71096f63",
            3
        )
    );
}

#[test]
fn root_of_shared_prefix_keys_is_pinned() {
    let (root, depth) =
        root_of((0u32..20_000).map(|i| (format!("{:0>300}{i:06}", "p").into_bytes(), Vec::new())));
    assert_eq!(
        (root.as_str(), depth),
        (
            "888249068404496115719586076efebc3ea6e14edca1feba15c9dd4be0846bbe",
            5
        )
    );
}

#[test]
fn root_of_long_keys_is_pinned() {
    let (root, depth) = root_of(
        (0u32..500)
            .map(|i| {
                let mut key = vec![b'k'; 3000 + (i as usize * 7) % 1096];
                key.extend_from_slice(&i.to_be_bytes());
                key.truncate(4096);
                (key, vec![i as u8; (i as usize * 13) % 200])
            })
            .collect::<std::collections::BTreeMap<_, _>>()
            .into_iter(),
    );
    assert_eq!(
        (root.as_str(), depth),
        (
            "1d521426b48ea94b30056c2ffda5e9d2170be50aabc2fd1afc9a56165cb0ef1f",
            9
        )
    );
}

/// Keys far over a node's target size, a quarter of them at the 64 KiB limit
/// (`KEY_BYTES_MAX`): each ends the node it joins, and internal nodes carry them as their
/// children's last keys. Reproduced by an independent reimplementation of format.md §6.
#[test]
fn root_of_oversized_keys_is_pinned() {
    let (root, depth) = root_of((0u32..60).map(|i| {
        let n = if i % 4 == 0 {
            rnt_merkle::KEY_BYTES_MAX
        } else {
            1000 + (i as usize * 9973) % 64_537
        };
        let mut key = i.to_be_bytes().to_vec();
        key.resize(n, b'o');
        (key, vec![i as u8; i as usize % 7])
    }));
    assert_eq!(
        (root.as_str(), depth),
        (
            "3a0e047afd78fd512fbd380dbc9f2e43aa516f30b163f1849e0dbd9ab1859c5d",
            6
        )
    );
}

fn sample_state() -> rnt_merkle::State {
    use rnt_merkle::{AuxTree, KindCode, RelationEntry, State};
    State {
        program: "relation r(x: int).\nview v(x: int).\n\nv(x) :- r(x).\n".to_string(),
        relations: vec![
            RelationEntry {
                name: "r".to_string(),
                kind: KindCode(0), // relation
                root: Some([0x11; 32]),
                count: Some(2),
                aux: vec![],
            },
            RelationEntry {
                name: "v".to_string(),
                kind: KindCode(1), // view
                root: Some([0x22; 32]),
                count: Some(1),
                aux: vec![AuxTree {
                    label: "index 0".to_string(),
                    root: [0x33; 32],
                }],
            },
        ],
        clock: None,
    }
}

#[test]
fn state_bytes_and_address_are_pinned() {
    let state = sample_state();
    let bytes = state.encode();
    assert_eq!(&bytes[..2], &[b'S', 1]);
    // program: u64 LE length then UTF-8.
    assert_eq!(&bytes[2..10], &(state.program.len() as u64).to_le_bytes());
    assert_eq!(
        Address::of(&bytes).to_hex(),
        "ec18f5cf4bc5f525d8484c40661b4d89d24247edb3bd6407f802ed676bd9b0f9"
    );
    let back = rnt_merkle::State::decode(&Address::of(&bytes), &bytes).unwrap();
    assert_eq!(back, state);
}

#[test]
fn commit_bytes_and_address_are_pinned() {
    use rnt_merkle::{ChangeCount, Commit, OperatorStat};
    let commit = Commit {
        parents: vec![[0x44; 32]],
        state: [0x55; 32],
        message: "tick".to_string(),
        time: 1_790_000_000,
        changes: vec![ChangeCount {
            relation: "r".to_string(),
            inserted: 3,
            deleted: 1,
        }],
        stats: vec![OperatorStat {
            relation: "v".to_string(),
            operator: "counting".to_string(),
            entries_read: 7,
            nodes_read: 9,
            nodes_written: 2,
        }],
    };
    let bytes = commit.encode();
    assert_eq!(&bytes[..2], &[b'C', 1]);
    // parents: u64 LE count 1, then 32 bytes.
    assert_eq!(&bytes[2..10], &1u64.to_le_bytes());
    assert_eq!(&bytes[10..42], &[0x44; 32]);
    assert_eq!(
        Address::of(&bytes).to_hex(),
        "d4a52df37457e0c60065be0df72ca6b14b82498fe76fafb9009f3cca3348565d"
    );
    assert_eq!(
        Commit::decode(&Address::of(&bytes), &bytes).unwrap(),
        commit
    );
}

/// A state with a clock (`docs/format.md` §8.1): version byte 2, then version 1's body, then
/// the clock as an `i64` LE. Built here by hand from the format's rules.
#[test]
fn clocked_state_bytes_and_address_are_pinned() {
    let clockless = sample_state();
    let mut state = sample_state();
    state.program = "relation r(x: int).\nview v(x: int).\n\nv(x) :- r(x), x > now - 10.\n".into();
    state.clock = Some(1_790_000_000);
    let bytes = state.encode();
    let mut expected = vec![b'S', 2];
    let body = rnt_merkle::State {
        clock: None,
        ..state.clone()
    }
    .encode();
    expected.extend_from_slice(&body[2..]);
    expected.extend_from_slice(&1_790_000_000i64.to_le_bytes());
    assert_eq!(hex(&bytes), hex(&expected));
    assert_eq!(
        Address::of(&bytes).to_hex(),
        "3901234aa4bae1d85bb45cc3e0d65e0cfd3eb5319b3276096e9ffbd0a1b8f3b1"
    );
    let back = rnt_merkle::State::decode(&Address::of(&bytes), &bytes).unwrap();
    assert_eq!(back, state);
    // A clock-less state keeps version 1 and its address.
    assert_eq!(&clockless.encode()[..2], &[b'S', 1]);
    // Version 2 without its clock, with a byte too many, or an unknown version: refused.
    let short = &bytes[..bytes.len() - 1];
    assert!(rnt_merkle::State::decode(&Address::of(short), short).is_err());
    let mut long = bytes.clone();
    long.push(0);
    assert!(rnt_merkle::State::decode(&Address::of(&long), &long).is_err());
    let mut unknown = bytes.clone();
    unknown[1] = 3;
    assert!(rnt_merkle::State::decode(&Address::of(&unknown), &unknown).is_err());
}

#[test]
fn objects_reject_trailing_bytes_unsorted_lists_and_other_tags() {
    let state = sample_state();
    let mut bytes = state.encode();
    bytes.push(0);
    assert!(rnt_merkle::State::decode(&Address::of(&bytes), &bytes).is_err());
    let mut unsorted = sample_state();
    unsorted.relations.reverse();
    let bytes = {
        let mut b = vec![b'S', 1];
        b.extend_from_slice(&unsorted.encode_body_for_test());
        b
    };
    assert!(rnt_merkle::State::decode(&Address::of(&bytes), &bytes).is_err());
    let commit_bytes = sample_state().encode();
    assert!(rnt_merkle::Commit::decode(&Address::of(&commit_bytes), &commit_bytes).is_err());
}

/// The byte layout of a branch record and a head pointer (`docs/format.md` §8.3, §8.4),
/// built here by hand from the format's rules and compared byte for byte.
#[test]
fn branch_record_and_head_pointer_bytes_are_pinned() {
    use rnt_merkle::objects::{object_kind, ObjectKind};
    use rnt_merkle::{BranchRecord, HeadPointer};
    let record = BranchRecord {
        commit: [0x66; 32],
        previous: Some([0x77; 32]),
        time: 1_790_000_000,
        action: "commit: tick".to_string(),
    };
    let mut expected = vec![b'B', 1];
    expected.extend_from_slice(&[0x66; 32]);
    expected.push(1);
    expected.extend_from_slice(&[0x77; 32]);
    expected.extend_from_slice(&1_790_000_000i64.to_le_bytes());
    expected.extend_from_slice(&12u64.to_le_bytes());
    expected.extend_from_slice(b"commit: tick");
    let bytes = record.encode();
    assert_eq!(hex(&bytes), hex(&expected));
    assert_eq!(
        Address::of(&bytes).to_hex(),
        "0ac9222ae20a14ba47e670211c28f369e757a00692cf7f0e11884af2ab37f2f5"
    );
    assert_eq!(
        BranchRecord::decode(&Address::of(&bytes), &bytes).unwrap(),
        record
    );
    assert_eq!(object_kind(&bytes), ObjectKind::BranchRecord);
    let first = BranchRecord {
        previous: None,
        ..record
    };
    assert_eq!(first.encode()[34], 0, "no previous record: option tag 00");

    let pointer = HeadPointer {
        branch: "main".to_string(),
    };
    let mut expected = vec![b'H', 1];
    expected.extend_from_slice(&4u64.to_le_bytes());
    expected.extend_from_slice(b"main");
    let bytes = pointer.encode();
    assert_eq!(hex(&bytes), hex(&expected));
    assert_eq!(
        HeadPointer::decode(&Address::of(&bytes), &bytes).unwrap(),
        pointer
    );
    assert_eq!(object_kind(&bytes), ObjectKind::HeadPointer);
    // Neither decodes as the other, nor as a commit.
    assert!(BranchRecord::decode(&Address::of(&bytes), &bytes).is_err());
    assert!(rnt_merkle::Commit::decode(&Address::of(&bytes), &bytes).is_err());
}

/// A remote record (`docs/format.md` §8.5): tag `R`, version 1, then the URL as a `u64`
/// length and its bytes. Built by hand from the format's rules and compared byte for byte;
/// the address is pinned so a drift in the encoding fails loudly.
#[test]
fn remote_record_bytes_are_pinned() {
    use rnt_merkle::objects::{object_kind, ObjectKind};
    use rnt_merkle::{HeadPointer, RemoteRecord};
    let record = RemoteRecord {
        url: "s3://bucket/shop".to_string(),
    };
    let mut expected = vec![b'R', 1];
    expected.extend_from_slice(&16u64.to_le_bytes());
    expected.extend_from_slice(b"s3://bucket/shop");
    let bytes = record.encode();
    assert_eq!(hex(&bytes), hex(&expected));
    assert_eq!(
        RemoteRecord::decode(&Address::of(&bytes), &bytes).unwrap(),
        record
    );
    assert_eq!(object_kind(&bytes), ObjectKind::RemoteRecord);
    assert!(HeadPointer::decode(&Address::of(&bytes), &bytes).is_err());
    assert_eq!(
        Address::of(&bytes).to_hex(),
        "043dab1041e87a97e827603795de2bb50e26b381d7c1b64da1b18f2040c2e1a0"
    );
}
