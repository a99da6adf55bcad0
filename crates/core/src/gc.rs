//! Cycle collection: freeing values that only hold each other (PHP's
//! `zend_gc`).
//!
//! Values are refcounted, so a value is freed when its last holder lets go
//! of it, except a cycle: `$a = [1]; $a[] = &$a;` makes a reference whose
//! array holds the reference, and after `unset($a)` each still holds the
//! other. Arrays are values (copy-on-write) and a closure's captures are
//! fixed before the closure exists, so every cycle passes through a
//! reference (`PhpRef`; objects, once there are any, will be the other
//! kind). The [`Collector`] therefore keeps a weak handle on every
//! reference the request makes — the VM cannot forget one, because
//! [`PhpRef::new`] asks for the collector — and these are its possible
//! roots. PHP buffers a value as a possible root when its count drops to a
//! non-zero value; a Rust drop cannot reach the engine's globals, so here
//! every live reference is a candidate, which is a superset of PHP's roots
//! for the cycles that matter.
//!
//! A collection is PHP's synchronous trial deletion (Bacon and Rajan) in
//! CPython's form, which needs no change to anyone's counts:
//!
//! 1. walk the graph of containers (references, arrays, closures, and the
//!    counted strings they hold) reachable from the live references;
//! 2. subtract from each node's count the edges that come from inside the
//!    graph: what is left is how many holders it has outside (variables,
//!    the VM's registers, EG's tables, a builtin's copy);
//! 3. everything reachable from a node with outside holders is alive;
//! 4. the rest is garbage: emptying its references breaks every cycle, and
//!    the ordinary drops free the lot.
//!
//! A reference whose slot is borrowed while the collector runs (a builtin
//! in the middle of writing it, calling back into the script) counts as
//! held from outside. [`Collector::collect`] returns PHP's count for
//! `gc_collect_cycles()`: the garbage that is not a reference (arrays,
//! closures, strings).

use std::rc::{Rc, Weak};

use crate::array::PhpArray;
use crate::string::PhpStr;
use crate::value::{Closure, PhpRef, RefSlot, Value};

/// PHP's `GC_THRESHOLD_DEFAULT`: live references before the first
/// automatic collection.
pub const DEFAULT_THRESHOLD: usize = 10_001;
/// PHP's `GC_THRESHOLD_STEP`, `GC_THRESHOLD_MAX` and
/// `GC_THRESHOLD_TRIGGER`: a collection that frees fewer than `TRIGGER`
/// values raises the threshold by a step (collections that find little
/// are not worth running as often), one that frees more lowers it again.
const THRESHOLD_STEP: usize = 10_000;
const THRESHOLD_MAX: usize = 1_000_000_000;
const THRESHOLD_TRIGGER: usize = 100;

/// The cycle collector's per-request state (PHP's `GC_G`): the possible
/// roots and the figures `gc_status()` reports. The engine keeps one in
/// its executor globals.
#[derive(Debug)]
pub struct Collector {
    /// Every reference made since the last collection or prune; some may
    /// be gone (their weak handle no longer upgrades).
    refs: Vec<Weak<RefSlot>>,
    /// When `refs` reaches this length, the gone handles are pruned and a
    /// collection may become due.
    check_at: usize,
    /// Live references that make a collection due (`gc_status()`'s
    /// "threshold").
    threshold: usize,
    /// Whether automatic collection is on (`gc_enable()`/`gc_disable()`).
    pub enabled: bool,
    /// Set by [`Collector::track`] when a collection is due.
    due: bool,
    /// Collections run (`gc_status()`'s "runs").
    pub runs: u64,
    /// Values collected in all (`gc_status()`'s "collected").
    pub collected: u64,
}

impl Default for Collector {
    fn default() -> Self {
        Collector::new()
    }
}

impl Collector {
    pub fn new() -> Collector {
        Collector {
            refs: Vec::new(),
            check_at: DEFAULT_THRESHOLD,
            threshold: DEFAULT_THRESHOLD,
            enabled: true,
            due: false,
            runs: 0,
            collected: 0,
        }
    }

    /// Keeps a weak handle on a new reference; once enough live ones have
    /// piled up, an automatic collection becomes due ([`Collector::due`]).
    #[inline]
    pub(crate) fn track(&mut self, r: &Rc<RefSlot>) {
        self.refs.push(Rc::downgrade(r));
        if self.refs.len() >= self.check_at {
            self.check();
        }
    }

    #[cold]
    fn check(&mut self) {
        self.prune();
        if self.enabled && self.refs.len() >= self.threshold {
            self.due = true;
        }
        self.check_at = self.refs.len() + self.threshold;
    }

    /// Whether an automatic collection is due: the engine runs it at its
    /// next safe point (a backward jump or a call), where no slot is
    /// borrowed.
    #[inline(always)]
    pub fn due(&self) -> bool {
        self.due
    }

    /// [`Collector::due`], clearing it.
    pub fn take_due(&mut self) -> bool {
        std::mem::take(&mut self.due)
    }

    /// Forgets the references that are gone.
    fn prune(&mut self) {
        self.refs.retain(|w| w.strong_count() > 0);
    }

    /// The references still alive (`gc_status()`'s "roots": PHP's buffer
    /// holds only those whose count dropped, so PHP's figure is lower).
    pub fn roots(&mut self) -> usize {
        self.prune();
        self.refs.len()
    }

    /// `gc_status()`'s "threshold".
    pub fn threshold(&self) -> usize {
        self.threshold
    }

    /// Finds and frees the garbage cycles among the values reachable from
    /// the live references; returns how many values it freed that are not
    /// references (what `gc_collect_cycles()` returns).
    pub fn collect(&mut self) -> usize {
        self.due = false;
        self.prune();
        // A cycle passes through a reference that holds an array or a
        // closure (references never hold references), so only those are
        // roots; the rest are reached from them if they matter at all.
        let roots = self
            .refs
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|rc| match rc.value.try_borrow() {
                Ok(v) => matches!(&*v, Value::Arr(_) | Value::Closure(_)),
                Err(_) => true,
            })
            .map(PhpRef::from_rc);
        let freed = Graph::of(roots).free_garbage();
        self.prune();
        self.runs += 1;
        self.collected += freed as u64;
        self.check_at = self.refs.len() + self.threshold;
        freed
    }

    /// An automatic collection (one that became [`Collector::due`]): as
    /// [`Collector::collect`], then the threshold adapts as PHP's does
    /// after such a run (an explicit `gc_collect_cycles()` leaves it).
    pub fn collect_due(&mut self) -> usize {
        let freed = self.collect();
        if freed < THRESHOLD_TRIGGER || self.refs.len() >= self.threshold {
            self.threshold = (self.threshold + THRESHOLD_STEP).min(THRESHOLD_MAX);
        } else if self.threshold > DEFAULT_THRESHOLD {
            self.threshold -= THRESHOLD_STEP;
        }
        self.check_at = self.refs.len() + self.threshold;
        freed
    }

    /// Request end: empties every reference still alive, whoever holds
    /// it, so every cycle comes apart and all the request's values are
    /// freed (PHP throws its whole request heap away). Call it once
    /// nothing of the request is used any more. The collector starts
    /// afresh (on, at the default threshold), as PHP's does per request.
    pub fn free_all(&mut self) {
        for w in std::mem::take(&mut self.refs) {
            if let Some(rc) = w.upgrade() {
                let v = rc.value.try_borrow_mut().map(|mut slot| std::mem::take(&mut *slot));
                drop(rc);
                drop(v);
            }
        }
        *self = Collector::new();
    }
}

/// A container the collector walks, held (one count) while it works.
enum Node {
    Ref(PhpRef),
    Arr(Rc<PhpArray>),
    Closure(Rc<Closure>),
    Str(PhpStr),
}

impl Node {
    /// Its holders, not counting the collector's own.
    fn holders(&self) -> usize {
        let n = match self {
            Node::Ref(r) => r.count(),
            Node::Arr(a) => Rc::strong_count(a),
            Node::Closure(c) => Rc::strong_count(c),
            Node::Str(s) => s.strong_count(),
        };
        n - 1
    }

    fn is_ref(&self) -> bool {
        matches!(self, Node::Ref(_))
    }

    fn handle(&self) -> Node {
        match self {
            Node::Ref(r) => Node::Ref(r.clone()),
            Node::Arr(a) => Node::Arr(a.clone()),
            Node::Closure(c) => Node::Closure(c.clone()),
            Node::Str(s) => Node::Str(s.clone()),
        }
    }
}

/// The containers reachable from the roots and the edges between them.
#[derive(Default)]
struct Graph {
    nodes: Vec<Node>,
    /// Node index by address.
    index: hashbrown::HashMap<usize, u32>,
    /// Per node: edges to it from other nodes of the graph.
    inside: Vec<usize>,
    /// Per node: its slot could not be read (borrowed), so it is alive.
    pinned: Vec<bool>,
    /// Node `i`'s children are `edges[first_edge[i]..first_edge[i + 1]]`.
    first_edge: Vec<usize>,
    edges: Vec<u32>,
}

impl Graph {
    fn of(roots: impl Iterator<Item = PhpRef>) -> Graph {
        let mut g = Graph::default();
        for r in roots {
            g.add(r.identity(), || Node::Ref(r.clone()));
        }
        // Nodes are scanned in the order they were found, so each one's
        // edges are contiguous.
        let mut next = 0;
        while next < g.nodes.len() {
            g.first_edge.push(g.edges.len());
            let node = g.nodes[next].handle();
            g.scan(next, &node);
            next += 1;
        }
        g.first_edge.push(g.edges.len());
        g
    }

    /// The node at `id`, added (with a handle from `make`) if it is new.
    fn add(&mut self, id: usize, make: impl FnOnce() -> Node) -> u32 {
        if let Some(&i) = self.index.get(&id) {
            return i;
        }
        let i = self.nodes.len() as u32;
        self.nodes.push(make());
        self.inside.push(0);
        self.pinned.push(false);
        self.index.insert(id, i);
        i
    }

    /// Adds the edges from node `i` (whose handle is `node`) to the
    /// containers it holds.
    fn scan(&mut self, i: usize, node: &Node) {
        match node {
            Node::Ref(r) => match r.try_borrow() {
                Ok(v) => self.edge_to(&v),
                Err(_) => self.pinned[i] = true,
            },
            Node::Arr(a) => a.values().for_each(|v| self.edge_to(v)),
            Node::Closure(c) => {
                c.bound.iter().for_each(|v| self.edge_to(v));
                match c.statics.try_borrow() {
                    Ok(statics) => statics.iter().flatten().for_each(|r| self.edge_to_ref(r)),
                    Err(_) => self.pinned[i] = true,
                }
            }
            Node::Str(_) => {}
        }
    }

    fn edge_to(&mut self, v: &Value) {
        let to = match v {
            Value::Ref(r) => return self.edge_to_ref(r),
            Value::Arr(a) => self.add(Rc::as_ptr(a) as usize, || Node::Arr(a.clone())),
            Value::Closure(c) => self.add(Rc::as_ptr(c) as usize, || Node::Closure(c.clone())),
            Value::Str(s) if !s.is_interned() => self.add(s.identity(), || Node::Str(s.clone())),
            _ => return,
        };
        self.edges.push(to);
        self.inside[to as usize] += 1;
    }

    fn edge_to_ref(&mut self, r: &PhpRef) {
        // A reference to a scalar or a string holds nothing and is never
        // on a cycle: not a node (arrays of many such references, left
        // by `foreach` by reference, are common).
        if r.try_borrow()
            .is_ok_and(|v| !matches!(&*v, Value::Arr(_) | Value::Closure(_)))
        {
            return;
        }
        let to = self.add(r.identity(), || Node::Ref(r.clone()));
        self.edges.push(to);
        self.inside[to as usize] += 1;
    }

    /// Frees what no outside holder reaches; returns how many of the freed
    /// nodes are not references.
    fn free_garbage(self) -> usize {
        let n = self.nodes.len();
        let mut alive = vec![false; n];
        let mut work: Vec<usize> = (0..n)
            .filter(|&i| self.pinned[i] || self.nodes[i].holders() > self.inside[i])
            .collect();
        for &i in &work {
            alive[i] = true;
        }
        while let Some(i) = work.pop() {
            for &to in &self.edges[self.first_edge[i]..self.first_edge[i + 1]] {
                let to = to as usize;
                if !alive[to] {
                    alive[to] = true;
                    work.push(to);
                }
            }
        }
        let mut freed = 0;
        let mut contents = Vec::new();
        for (node, _) in self.nodes.iter().zip(&alive).filter(|(_, &a)| !a) {
            match node {
                Node::Ref(r) => {
                    if let Ok(mut slot) = r.try_borrow_mut() {
                        contents.push(std::mem::take(&mut *slot));
                    }
                }
                _ => freed += 1,
            }
        }
        debug_assert!(self
            .nodes
            .iter()
            .zip(&alive)
            .all(|(node, &a)| a || node.is_ref() || node.holders() > 0));
        // The collector's handles go first, then the cycles' contents,
        // whose drops now free every garbage value.
        drop(self);
        drop(contents);
        freed
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    fn list(values: Vec<Value>) -> Value {
        Value::arr(PhpArray::from_list(values))
    }

    /// `$a = [x, &$a]` as its reference (the variable `$a`).
    fn self_cycle(gc: &mut Collector, x: Value) -> PhpRef {
        let r = PhpRef::new(Value::Null, gc);
        r.set(list(vec![x, Value::Ref(r.clone())]));
        r
    }

    #[test]
    fn a_dropped_self_cycle_is_collected() {
        let mut gc = Collector::new();
        let r = self_cycle(&mut gc, Value::str("counted"));
        let weak = r.downgrade();
        // Still held by the variable: nothing to collect.
        assert_eq!(gc.collect(), 0);
        assert!(weak.upgrade().is_some());
        drop(r);
        // The array and the counted string, as PHP counts them.
        assert_eq!(gc.collect(), 2);
        assert!(weak.upgrade().is_none());
        assert_eq!((gc.runs, gc.collected), (2, 2));
        assert_eq!(gc.roots(), 0);
    }

    #[test]
    fn a_cycle_held_from_outside_through_an_array_is_kept() {
        let mut gc = Collector::new();
        let r = self_cycle(&mut gc, Value::Int(1));
        // `$b = $a;` then `unset($a)`: the array is held by `$b`.
        let b = r.get();
        drop(r);
        assert_eq!(gc.collect(), 0);
        let Value::Arr(arr) = &b else { unreachable!() };
        assert_eq!(arr.len(), 2);
        drop(b);
        assert_eq!(gc.collect(), 1);
    }

    #[test]
    fn mutual_references_and_closures_are_collected() {
        let mut gc = Collector::new();
        // $a = [1]; $b = [2]; $a[] = &$b; $b[] = &$a;
        let ra = PhpRef::new(Value::Null, &mut gc);
        let rb = PhpRef::new(Value::Null, &mut gc);
        ra.set(list(vec![Value::Int(1), Value::Ref(rb.clone())]));
        rb.set(list(vec![Value::Int(2), Value::Ref(ra.clone())]));
        // $f = function () use (&$f) {};
        let rf = PhpRef::new(Value::Null, &mut gc);
        rf.set(Value::Closure(Rc::new(Closure {
            func: 0,
            bound: vec![Value::Ref(rf.clone())],
            statics: RefCell::new(Vec::new()),
            handle: 1,
            kind: crate::value::ClosureKind::Literal,
            store: None,
            this: None,
            scope: 0,
            called: 0,
        })));
        drop((ra, rb, rf));
        assert_eq!(gc.collect(), 3);
        assert_eq!(gc.roots(), 0);
    }

    #[test]
    fn a_borrowed_reference_is_kept_with_what_it_reaches() {
        let mut gc = Collector::new();
        let r = self_cycle(&mut gc, Value::Int(1));
        let weak = r.downgrade();
        // A builtin holding the slot borrowed, and the variable gone: the
        // slot cannot be read, so the collector leaves it alone.
        let held = r.clone();
        drop(r);
        let guard = held.try_borrow_mut().unwrap();
        assert_eq!(gc.collect(), 0);
        drop(guard);
        drop(held);
        assert_eq!(gc.collect(), 1);
        assert!(weak.upgrade().is_none());
    }

    #[test]
    fn collections_become_due_at_the_threshold() {
        // Live references: due when the threshold's worth exist.
        let mut gc = Collector::new();
        let mut live = Vec::new();
        let fired = (1..=DEFAULT_THRESHOLD * 3).find(|_| {
            live.push(PhpRef::new(Value::Null, &mut gc));
            gc.take_due()
        });
        assert_eq!(fired, Some(DEFAULT_THRESHOLD));
        // References that went away on their own do not count.
        let mut gc = Collector::new();
        for _ in 0..DEFAULT_THRESHOLD * 3 {
            drop(PhpRef::new(Value::Null, &mut gc));
            assert!(!gc.take_due());
        }
        assert!(gc.refs.len() <= DEFAULT_THRESHOLD);
        // Nor do any while collection is off.
        let mut gc = Collector::new();
        gc.enabled = false;
        let live: Vec<PhpRef> = (0..DEFAULT_THRESHOLD * 2)
            .map(|_| PhpRef::new(Value::Null, &mut gc))
            .collect();
        assert!(!gc.take_due());
        drop(live);
    }

    #[test]
    fn an_automatic_collection_that_finds_little_raises_the_threshold() {
        let mut gc = Collector::new();
        gc.collect();
        assert_eq!(gc.threshold(), DEFAULT_THRESHOLD);
        gc.collect_due();
        assert_eq!(gc.threshold(), DEFAULT_THRESHOLD + THRESHOLD_STEP);
        let cycles: Vec<PhpRef> = (0..200).map(|_| self_cycle(&mut gc, Value::Int(0))).collect();
        drop(cycles);
        assert_eq!(gc.collect_due(), 200);
        assert_eq!(gc.threshold(), DEFAULT_THRESHOLD);
    }

    #[test]
    fn free_all_breaks_cycles_that_are_still_held() {
        let mut gc = Collector::new();
        let r = self_cycle(&mut gc, Value::str("x"));
        let weak = r.downgrade();
        let arr = r.get();
        drop(r);
        gc.free_all();
        // The holder outside keeps its array, whose reference is now empty.
        assert!(weak.upgrade().is_some());
        drop(arr);
        assert!(weak.upgrade().is_none());
    }
}
