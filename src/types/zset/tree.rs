//! An order-statistics B+tree: a sequence of small `Copy` handles, kept in the caller's order,
//! with every operation addressed by rank. It never compares two elements itself: lookups
//! take a monotone predicate ([`OsTree::partition_point`]), so the tree knows nothing about
//! scores or members and the sorted set (`big`) owns the ordering.
//!
//! # Layout
//!
//! ```text
//!                      root: Inner [ Child{len 90, last ─┐, node}, Child{len 71, last, node} ]
//!                                                       │
//!       Leaf [h0 h1 ... h44]   Leaf [h45 ... h89] ◄─────┘ (last = h89)    Leaf [...] ...
//! ```
//!
//! - A leaf is a `Vec<T>` allocated once with capacity [`LEAF_CAP`] (64 handles, 512 bytes:
//!   exactly a jemalloc size class) that never grows: it splits in two when it would hold
//!   more than [`LEAF_MAX`] handles.
//! - An inner node is a `Vec<Child>` of capacity [`INNER_CAP`] (32 × 24 bytes = 768, again a
//!   size class). A `Child` records its subtree's element count (for ranks) and its last
//!   element (the separator that [`OsTree::partition_point`] tests).
//! - Every node but the root holds at least half its maximum; a removal that leaves a node
//!   below that merges it with a neighbour, or moves elements over from the neighbour when
//!   the two together would not fit one node. All leaves are at the same depth.
//!
//! At the usual 50-100% fill a handle costs 8-16 bytes of leaf (about 11 on average) plus
//! under 1 byte of inner nodes, and a lookup in a million elements visits 4 nodes.

/// Handles a leaf holds at most.
pub const LEAF_MAX: usize = 63;
/// A leaf's fixed allocation (one spare slot: a full leaf takes the new handle, then splits).
pub const LEAF_CAP: usize = LEAF_MAX + 1;
const LEAF_MIN: usize = LEAF_MAX / 2;
/// Children an inner node holds at most.
pub const INNER_MAX: usize = 31;
pub const INNER_CAP: usize = INNER_MAX + 1;
const INNER_MIN: usize = INNER_MAX / 2;

#[derive(Debug)]
enum Node<T> {
    Leaf(Vec<T>),
    Inner(Vec<Child<T>>),
}

#[derive(Debug)]
struct Child<T> {
    /// Elements in the subtree.
    len: usize,
    /// The subtree's last element.
    last: T,
    node: Box<Node<T>>,
}

/// Node counts, for memory accounting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeCounts {
    pub leaves: usize,
    pub inners: usize,
}

/// The tree (see the module documentation).
#[derive(Debug)]
pub struct OsTree<T: Copy> {
    root: Node<T>,
    len: usize,
    counts: NodeCounts,
}

impl<T: Copy> Default for OsTree<T> {
    fn default() -> Self {
        OsTree::new()
    }
}

impl<T: Copy> Node<T> {
    fn entries(&self) -> usize {
        match self {
            Node::Leaf(v) => v.len(),
            Node::Inner(c) => c.len(),
        }
    }

    fn min_entries(&self) -> usize {
        match self {
            Node::Leaf(_) => LEAF_MIN,
            Node::Inner(_) => INNER_MIN,
        }
    }

    fn last(&self) -> T {
        match self {
            Node::Leaf(v) => *v.last().expect("non-empty leaf"),
            Node::Inner(c) => c.last().expect("non-empty inner node").last,
        }
    }

    fn count(&self) -> usize {
        match self {
            Node::Leaf(v) => v.len(),
            Node::Inner(c) => c.iter().map(|c| c.len).sum(),
        }
    }
}

impl<T: Copy> Child<T> {
    fn of(node: Node<T>) -> Child<T> {
        Child { len: node.count(), last: node.last(), node: Box::new(node) }
    }

    fn refresh(&mut self) {
        self.len = self.node.count();
        self.last = self.node.last();
    }
}

/// The child of `children` that holds `rank`, and the rank inside it. `rank == total` (an
/// append) goes to the last child.
fn locate<T>(children: &[Child<T>], mut rank: usize) -> (usize, usize) {
    for (i, c) in children.iter().enumerate() {
        if rank < c.len {
            return (i, rank);
        }
        rank -= c.len;
    }
    let last = children.len() - 1;
    (last, rank + children[last].len)
}

/// A vector of fixed capacity `cap` holding `v[at..]`, which leaves `v`.
fn split_off_fixed<X>(v: &mut Vec<X>, at: usize, cap: usize) -> Vec<X> {
    let mut right = Vec::with_capacity(cap);
    right.extend(v.drain(at..));
    right
}

/// Merges `b` into `a` when both fit one node (returns true), else moves entries across so
/// both hold about half.
fn rebalance_vecs<X>(a: &mut Vec<X>, b: &mut Vec<X>, max: usize) -> bool {
    let total = a.len() + b.len();
    if total <= max {
        a.append(b);
        return true;
    }
    let want_a = total / 2;
    if a.len() < want_a {
        let n = want_a - a.len();
        a.extend(b.drain(..n));
    } else {
        let n = a.len() - want_a;
        let moved: Vec<X> = a.drain(a.len() - n..).collect();
        b.splice(0..0, moved);
    }
    false
}

impl<T: Copy> OsTree<T> {
    pub fn new() -> OsTree<T> {
        OsTree { root: Node::Leaf(Vec::new()), len: 0, counts: NodeCounts::default() }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Leaves and inner nodes allocated (the root leaf counts once it has an allocation).
    pub fn node_counts(&self) -> NodeCounts {
        self.counts
    }

    /// The element at `rank`. Panics when `rank >= len`.
    pub fn get(&self, rank: usize) -> T {
        let (leaf, at) = self.leaf_at(rank);
        leaf[at]
    }

    /// The leaf holding `rank`, and the index of `rank` in it.
    fn leaf_at(&self, mut rank: usize) -> (&[T], usize) {
        assert!(rank < self.len, "rank {rank} out of {}", self.len);
        let mut node = &self.root;
        loop {
            match node {
                Node::Leaf(v) => return (v, rank),
                Node::Inner(children) => {
                    let (i, r) = locate(children, rank);
                    rank = r;
                    node = &children[i].node;
                }
            }
        }
    }

    /// The number of leading elements for which `pred` holds. `pred` must hold for a
    /// prefix of the sequence and fail for the rest (like `slice::partition_point`).
    pub fn partition_point(&self, mut pred: impl FnMut(T) -> bool) -> usize {
        let mut rank = 0;
        let mut node = &self.root;
        loop {
            match node {
                Node::Leaf(v) => return rank + v.partition_point(|&x| pred(x)),
                Node::Inner(children) => {
                    let i = children.partition_point(|c| pred(c.last));
                    rank += children[..i].iter().map(|c| c.len).sum::<usize>();
                    if i == children.len() {
                        return rank;
                    }
                    node = &children[i].node;
                }
            }
        }
    }

    /// Inserts `v` so that it gets `rank` (`rank <= len`).
    pub fn insert(&mut self, rank: usize, v: T) {
        assert!(rank <= self.len, "insert at {rank} past {}", self.len);
        if let Node::Leaf(l) = &mut self.root {
            if l.capacity() == 0 {
                *l = Vec::with_capacity(LEAF_CAP);
                self.counts.leaves += 1;
            }
        }
        if let Some(right) = insert_rec(&mut self.root, rank, v, &mut self.counts) {
            let left = std::mem::replace(&mut self.root, Node::Leaf(Vec::new()));
            let mut children = Vec::with_capacity(INNER_CAP);
            children.push(Child::of(left));
            children.push(Child::of(right));
            self.root = Node::Inner(children);
            self.counts.inners += 1;
        }
        self.len += 1;
    }

    /// Appends `v` at the end.
    pub fn push(&mut self, v: T) {
        self.insert(self.len, v);
    }

    /// Removes and returns the element at `rank` (`rank < len`).
    pub fn remove(&mut self, rank: usize) -> T {
        assert!(rank < self.len, "remove at {rank} out of {}", self.len);
        let v = remove_rec(&mut self.root, rank, &mut self.counts);
        self.len -= 1;
        // A root with one child hands over to that child.
        while let Node::Inner(children) = &mut self.root {
            if children.len() != 1 {
                break;
            }
            let only = children.pop().expect("one child");
            self.root = *only.node;
            self.counts.inners -= 1;
        }
        if self.len == 0 {
            if let Node::Leaf(l) = &mut self.root {
                if l.capacity() != 0 {
                    *l = Vec::new();
                    self.counts.leaves -= 1;
                }
            }
        }
        v
    }

    /// Calls `f` on the elements of ranks `start..end` in order (or from `end - 1` down to
    /// `start` when `rev`), until `f` returns false.
    pub fn visit(&self, start: usize, end: usize, rev: bool, mut f: impl FnMut(T) -> bool) {
        let end = end.min(self.len);
        if start >= end {
            return;
        }
        if rev {
            let mut rank = end; // one past the next to visit
            while rank > start {
                let (leaf, at) = self.leaf_at(rank - 1);
                let from = at + 1 - (rank - start).min(at + 1);
                for &x in leaf[from..=at].iter().rev() {
                    if !f(x) {
                        return;
                    }
                }
                rank -= at + 1 - from;
            }
        } else {
            let mut rank = start;
            while rank < end {
                let (leaf, at) = self.leaf_at(rank);
                let to = leaf.len().min(at + (end - rank));
                for &x in &leaf[at..to] {
                    if !f(x) {
                        return;
                    }
                }
                rank += to - at;
            }
        }
    }

    /// Checks the structure: counts, separators, fill and depth. For tests.
    pub fn check_invariants(&self, mut same: impl FnMut(T, T) -> bool) {
        fn walk<T: Copy>(
            n: &Node<T>,
            root: bool,
            depth: usize,
            leaf_depth: &mut Option<usize>,
            counts: &mut NodeCounts,
            same: &mut impl FnMut(T, T) -> bool,
        ) -> usize {
            if !root {
                assert!(n.entries() >= n.min_entries(), "underfull node");
            }
            match n {
                Node::Leaf(v) => {
                    assert!(v.len() <= LEAF_MAX && (v.capacity() == LEAF_CAP || v.capacity() == 0));
                    assert_eq!(*leaf_depth.get_or_insert(depth), depth, "leaves at one depth");
                    if v.capacity() != 0 {
                        counts.leaves += 1;
                    }
                    v.len()
                }
                Node::Inner(children) => {
                    assert!(children.len() <= INNER_MAX && children.capacity() == INNER_CAP);
                    assert!(children.len() >= 2 || !root, "root inner node with one child");
                    counts.inners += 1;
                    let mut total = 0;
                    for c in children {
                        let n = walk(&c.node, false, depth + 1, leaf_depth, counts, same);
                        assert_eq!(n, c.len, "child count");
                        assert!(same(c.last, c.node.last()), "separator is the last element");
                        total += n;
                    }
                    total
                }
            }
        }
        let mut counts = NodeCounts::default();
        let n = walk(&self.root, true, 0, &mut None, &mut counts, &mut same);
        assert_eq!(n, self.len);
        assert_eq!(counts, self.counts);
    }
}

/// Inserts into the subtree; returns a new right sibling when the node split.
fn insert_rec<T: Copy>(
    node: &mut Node<T>,
    rank: usize,
    v: T,
    counts: &mut NodeCounts,
) -> Option<Node<T>> {
    match node {
        Node::Leaf(l) => {
            debug_assert_eq!(l.capacity(), LEAF_CAP);
            l.insert(rank, v);
            if l.len() <= LEAF_MAX {
                return None;
            }
            counts.leaves += 1;
            let mid = l.len() / 2;
            Some(Node::Leaf(split_off_fixed(l, mid, LEAF_CAP)))
        }
        Node::Inner(children) => {
            let (i, r) = locate(children, rank);
            let split = insert_rec(&mut children[i].node, r, v, counts);
            match split {
                None => {
                    let c = &mut children[i];
                    c.len += 1;
                    c.last = c.node.last();
                    None
                }
                Some(right) => {
                    children[i].refresh();
                    children.insert(i + 1, Child::of(right));
                    if children.len() <= INNER_MAX {
                        return None;
                    }
                    counts.inners += 1;
                    let mid = children.len() / 2;
                    Some(Node::Inner(split_off_fixed(children, mid, INNER_CAP)))
                }
            }
        }
    }
}

/// Removes from the subtree; children left underfull are merged or refilled on the way up.
fn remove_rec<T: Copy>(node: &mut Node<T>, rank: usize, counts: &mut NodeCounts) -> T {
    match node {
        Node::Leaf(l) => l.remove(rank),
        Node::Inner(children) => {
            let (i, r) = locate(children, rank);
            let v = remove_rec(&mut children[i].node, r, counts);
            children[i].len -= 1;
            let child = &children[i].node;
            if child.entries() >= child.min_entries() {
                children[i].last = children[i].node.last();
                return v;
            }
            let left = if i + 1 < children.len() { i } else { i - 1 };
            let (a, b) = children.split_at_mut(left + 1);
            let (a, b) = (&mut a[left], &mut b[0]);
            let merged = match (&mut *a.node, &mut *b.node) {
                (Node::Leaf(x), Node::Leaf(y)) => rebalance_vecs(x, y, LEAF_MAX),
                (Node::Inner(x), Node::Inner(y)) => rebalance_vecs(x, y, INNER_MAX),
                _ => unreachable!("siblings at one depth"),
            };
            if merged {
                match *children.remove(left + 1).node {
                    Node::Leaf(_) => counts.leaves -= 1,
                    Node::Inner(_) => counts.inners -= 1,
                }
                children[left].refresh();
            } else {
                children[left].refresh();
                children[left + 1].refresh();
            }
            v
        }
    }
}
