//! The CS-trie: a lock-free concurrent subscription trie in the style of the Ctrie (Prokopec,
//! Bronson, Bagwell, Odersky, `PPoPP` 2012), as "Fast Topic Matching" proposes, without the
//! costs its implementation measures.
//!
//! # Structure
//! Each trie level is an **I-node** (`raw::INode`): an atomic pointer to an immutable
//! **main node** (`nodes::Main`). A main node is either a **C-node** (the level's children by
//! literal word, its one-word and multi-word wildcard children, and the subscribers whose
//! pattern ends here) or a **tombstone** (an emptied level being unlinked). Every change to a
//! level builds a new main node and installs it with one compare-and-swap on the I-node; a
//! failed CAS means another writer changed that level, and the operation retries in a loop.
//!
//! A narrow level's word children (at most 16) sit in one shared flat array, a wide level's in a
//! persistent hash array mapped trie (`hamt`); the subscriber set keeps two ids inline, then
//! a shared array, then a HAMT (`subs`). A new main node shares them with the old one and
//! rebuilds only what the update touches: a bounded array, or the HAMT path (at most 16 nodes
//! of at most 16 slots). So a level with 100,000 children or a pattern with 100,000
//! subscribers costs O(log n) per insert, not O(n): neither the child map nor the subscriber
//! set is copied whole, unlike the Go CS-trie of "Fast Topic Matching" (and RabbitMQ's old
//! one).
//!
//! Words are compared through a 16-byte key (`kids::Key`): a word of up to 15 bytes is its
//! own key, so a child is found by integer compares with no hashing and no pointer to follow;
//! longer words are keyed by a 64-bit hash and compared once. There is no global word table for
//! lookups to consult or for unsubscribes to maintain.
//!
//! # Operations
//! - **insert** walks down from the root; where the path ends early it installs the whole
//!   missing suffix (a private chain of new I-nodes ending in the subscriber) with one CAS on
//!   the deepest existing level; otherwise it CASes the subscriber into the final level.
//! - **remove** CASes the subscriber out of the final level. If that leaves the level empty
//!   (and it is not the root), it installs a tombstone instead, then *contracts*: removes the
//!   tombstoned child from its parent, tombstoning the parent too if that empties it, upward.
//! - A writer that meets a tombstone *helps*: it runs the same contraction from its own path,
//!   then restarts from the root. So no operation waits for another: lock-free.
//! - **lookup** pins once (once per batch in `lookup_batch_into`), then walks depth first over
//!   (main node, position) states (AMQP `#` states memoised), reading each I-node with one load
//!   as its state is pushed; a walk with many states waiting goes on level by level, a whole
//!   level's loads in flight. A batch of high fan-out topics is walked a few topics at a time,
//!   level by level, so that the loads of different topics are in flight together (`batch`).
//!
//! # Invariants
//! 1. A tombstone never changes again, and has no children or subscribers.
//! 2. A child is unlinked from its parent only after it is a tombstone; hence an I-node whose
//!    main node a writer replaced by a successful CAS (not a tombstone at that moment) was
//!    reachable from the root at that moment, and the change is visible to later lookups.
//! 3. The root is never a tombstone.
//! 4. Main nodes are freed only after the epoch has passed every thread that could hold them
//!    (crossbeam-epoch); an I-node is freed through the epoch once a contraction unlinks it,
//!    or with the matcher (main nodes link children by plain pointers, see `raw`).
//! 5. A wide level's HAMT nodes and long words have no reference count: they belong to the
//!    level's current version; the update that stops linking one retires it with the main node
//!    it replaced, and a failed CAS frees what its update allocated (`raw::Delta`).
//!
//! `docs/CONCURRENCY.md` gives the full argument, the memory orderings and what a lookup
//! guarantees.

mod batch;
mod cache;
mod hamt;
mod kids;
mod nodes;
mod raw;
mod relate;
mod subs;
mod walk;

use smallvec::SmallVec;

use crate::error::Result;
use crate::matcher::{Config, Matcher, Related, SubscriberId};
use crate::pattern::Pattern;
use crate::relation::Query;
use nodes::{Edge, Fresh, INode, Main};
use raw::{Delta, Pin, Reclaim};

/// The edges of a pattern, inline for usual depths.
type Edges<'a> = SmallVec<[Edge<'a>; 16]>;
/// Fills `edges` (empty) with the edges of `pattern`, in place: a 640-byte inline vector is
/// not worth returning (measured: the move is a `memcpy` of ~90 instructions per insert).
#[inline]
fn edges_of<'p>(pattern: &'p Pattern, edges: &mut Edges<'p>) {
    for word in pattern.words() {
        edges.push(Edge::of(word));
    }
}

/// The I-nodes from the root down to the current level.
type Path<'g> = SmallVec<[&'g INode; 16]>;

/// A lock-free concurrent subscription trie.
pub struct CsTrieMatcher {
    config: Config,
    root: INode,
    reclaim: Reclaim,
    /// The result cache, if `config.cache_capacity` asks for one ([`cache`]).
    cache: Option<cache::Cache>,
}

impl CsTrieMatcher {
    /// An empty trie, caching the results of up to `config.cache_capacity` topics if that is
    /// given (`cache`; none by default).
    pub fn new(config: Config) -> Self {
        CsTrieMatcher {
            config,
            root: INode::new(Main::default()),
            reclaim: Reclaim::default(),
            cache: config.cache_capacity.map(cache::Cache::new),
        }
    }

    /// Marks an insert or remove under way for the result cache, if there is one, until the
    /// value returned is dropped.
    #[inline]
    fn change(&self) -> Option<cache::Change<'_>> {
        self.cache.as_ref().map(cache::Cache::change)
    }

    /// Whether the trie holds nothing: true once every subscription was removed, because
    /// emptied levels are contracted away (the trie shrinks back).
    pub fn is_empty(&self) -> bool {
        let pin = self.reclaim.pin();
        self.root.load(&pin).is_empty()
    }

    /// Removes the tombstone at the end of `path` from its parent, and every parent that this
    /// leaves empty, bottom-up. `path[k]` is the child of `path[k - 1]` along `edges[k - 1]`.
    fn contract(path: &[&INode], edges: &[Edge<'_>], pin: &Pin<'_>) {
        let mut k = path.len() - 1;
        while k > 0 {
            let (parent, child, edge) = (path[k - 1], path[k], edges[k - 1]);
            loop {
                let current = parent.load(pin);
                if current.is_tomb() {
                    // A helper tombstoned the parent already: carry on upward.
                    break;
                }
                let link = match current.child(edge) {
                    Some(&c) if c.is(child) => c,
                    // Someone unlinked `child` already, and the parent lives on: done.
                    _ => return,
                };
                let mut delta = Delta::default();
                let mut next = current.without_child(edge, &mut delta);
                let emptied = next.is_empty() && k > 1;
                if emptied {
                    next = Main::tomb();
                    delta = delta.tombstoning(current);
                }
                if parent.cas_unlinking(current, next, delta, (edge, link), pin) {
                    if emptied {
                        break;
                    }
                    return;
                }
            }
            k -= 1;
        }
    }

    /// A new, unpublished I-node with a chain of levels along `edges` below it, ending in a
    /// leaf holding `sub`.
    fn chain(edges: &[Edge<'_>], sub: SubscriberId) -> Fresh {
        let mut main = Main::leaf(sub);
        let mut delta = Delta::default();
        for &edge in edges.iter().rev() {
            main = Main::default().with_child(edge, Fresh::new(main).into_child(), &mut delta);
        }
        delta.keep();
        Fresh::new(main)
    }
}

impl Drop for CsTrieMatcher {
    fn drop(&mut self) {
        self.root.free_children();
    }
}

impl Matcher for CsTrieMatcher {
    fn name(&self) -> &'static str {
        "cstrie"
    }

    fn insert(&self, pattern: &Pattern, subscriber: SubscriberId) {
        let mut edges = Edges::new();
        edges_of(pattern, &mut edges);
        let _change = self.change();
        let pin = self.reclaim.pin();
        // The missing suffix built for a CAS that failed, with the depth it hangs below: a
        // retry at that depth (another writer changed the same level, the usual collision)
        // links it again instead of building a new one.
        let mut built: Option<(usize, Fresh)> = None;
        'restart: loop {
            let mut path: Path<'_> = SmallVec::new();
            path.push(&self.root);
            loop {
                let inode = path[path.len() - 1];
                let depth = path.len() - 1;
                let main = inode.load(&pin);
                if main.is_tomb() {
                    Self::contract(&path, &edges, &pin);
                    continue 'restart;
                }
                if depth == edges.len() {
                    let mut delta = Delta::default();
                    let next = main.with_sub(subscriber, &mut delta);
                    if inode.cas(main, next, delta, &pin) {
                        return;
                    }
                    continue;
                }
                if let Some(child) = main.child(edges[depth]) {
                    path.push(child.get(&pin));
                    continue;
                }
                // An unpublished chain not linked in the end is dropped, freeing it.
                let suffix = match built.take() {
                    Some((at, suffix)) if at == depth => suffix,
                    _ => Self::chain(&edges[depth + 1..], subscriber),
                };
                let mut delta = Delta::default();
                let next = main.with_child(edges[depth], suffix.child(), &mut delta);
                if inode.cas(main, next, delta, &pin) {
                    suffix.publish();
                    return;
                }
                built = Some((depth, suffix));
            }
        }
    }

    fn remove(&self, pattern: &Pattern, subscriber: SubscriberId) -> bool {
        let mut edges = Edges::new();
        edges_of(pattern, &mut edges);
        let _change = self.change();
        let pin = self.reclaim.pin();
        let mut path: Path<'_> = SmallVec::new();
        path.push(&self.root);
        loop {
            let inode = path[path.len() - 1];
            let depth = path.len() - 1;
            let main = inode.load(&pin);
            if main.is_tomb() {
                // Invariant 1: nothing lives below a tombstone.
                return false;
            }
            if depth < edges.len() {
                match main.child(edges[depth]) {
                    Some(child) => path.push(child.get(&pin)),
                    None => return false,
                }
                continue;
            }
            let mut delta = Delta::default();
            let Some(mut next) = main.without_sub(subscriber, &mut delta) else {
                return false;
            };
            let emptied = next.is_empty() && depth > 0;
            if emptied {
                next = Main::tomb();
                delta = delta.tombstoning(main);
            }
            if inode.cas(main, next, delta, &pin) {
                if emptied {
                    Self::contract(&path, &edges, &pin);
                }
                return true;
            }
        }
    }

    fn lookup_into(&self, topic: &str, out: &mut Vec<SubscriberId>) -> Result<()> {
        self.walk_topic(topic, out, false, None).map(|_| ())
    }

    fn lookup_distinct_into(
        &self,
        topic: &str,
        out: &mut Vec<SubscriberId>,
        distinct: &dyn Fn() -> bool,
    ) -> Result<()> {
        self.walk_topic(topic, out, false, Some(distinct))
            .map(|_| ())
    }

    fn matches_any(&self, topic: &str) -> Result<bool> {
        // `first_only` appends nothing.
        self.walk_topic(topic, &mut Vec::new(), true, None)
    }

    fn lookup_batch_into(
        &self,
        topics: &[&str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        self.walk_batch(topics, out, ends, None)
    }

    fn lookup_batch_distinct_into(
        &self,
        topics: &[&str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
        distinct: &dyn Fn() -> bool,
    ) -> Result<()> {
        self.walk_batch(topics, out, ends, Some(distinct))
    }

    fn related_into(&self, query: &Query<'_>, out: &mut Vec<Related>) -> Result<bool> {
        self.related(query, out)
    }
}

#[cfg(all(test, not(loom)))]
mod cache_tests;
#[cfg(all(test, not(loom)))]
mod tests;
