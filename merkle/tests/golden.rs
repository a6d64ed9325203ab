//! Pins the node format and the chunker: exact node bytes with their BLAKE3 addresses,
//! boundary hashes and thresholds, and root addresses of fixed data sets. A change to any
//! of these changes every address rnt has ever written, so it must fail loudly here (and
//! come with a new format version).

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
