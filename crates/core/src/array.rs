//! PHP arrays: ordered maps with int|string keys, and packed lists.
//!
//! A [`PhpArray`] is *packed* (a plain `Vec` of values, the key of each
//! its index) while its int keys arrive in increasing order and close
//! together: `$a[1]`, `$a[2]`, … from 1 stays packed with a hole at 0, as
//! in PHP 8, where holes are `IS_UNDEF` slots. Something that breaks that
//! (a string key, a key below the last one, into a hole, or far past the
//! end) makes it an ordered hash: buckets in
//! insertion order, deleted ones left as tombstones until the next
//! compaction, and a `hashbrown` table from key hash to bucket index. This
//! is PHP's `HashTable` with its packed variant, and keeps its rules:
//! string keys that look like canonical decimal integers are ints, and the
//! next free int key (`nNextFreeElement`) only ever grows.
//!
//! Values hold arrays through `Rc`, so copying an array is a count bump and
//! the first write to a shared array copies it (copy-on-write).
//!
//! An array also knows the `foreach` loops that iterate it by reference
//! ([`IterPos`], PHP's `HashTableIterator`): each is the position of the
//! next slot the loop looks at, and every operation that moves or removes
//! slots moves those positions the way `zend_hash_iterators_update` and its
//! callers do, so a loop follows its array through unsets, compaction,
//! `array_shift`, `array_splice` and the like. Positions are physical slots
//! (holes and tombstones count), as PHP's are; that is why a removal in the
//! middle of a packed array leaves a hole, as in PHP 8.

use std::cell::Cell;
use std::rc::Rc;

use hashbrown::HashTable;

use crate::string::{bytes_hash as str_hash, PhpStr};
use crate::value::Value;

/// An array key after PHP's normalisation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    Int(i64),
    Str(PhpStr),
}

impl Key {
    /// The key a string becomes: an int if it is a canonical decimal
    /// integer ("12", "-3", but not "012", "1.0", " 1" or "-0").
    pub fn from_bytes(s: &[u8]) -> Key {
        match canonical_int(s) {
            Some(n) => Key::Int(n),
            None => Key::Str(PhpStr::from(s)),
        }
    }

    /// Like [`Key::from_bytes`] but reuses `s` when it stays a string.
    pub fn from_php_str(s: PhpStr) -> Key {
        match canonical_int(&s) {
            Some(n) => Key::Int(n),
            None => Key::Str(s),
        }
    }

    /// The key as a value (ints stay ints, strings stay strings).
    pub fn to_value(&self) -> Value {
        match self {
            Key::Int(n) => Value::Int(*n),
            Key::Str(s) => Value::Str(s.clone()),
        }
    }
}

/// `Some(n)` if `s` is how PHP writes the integer `n`.
pub fn canonical_int(s: &[u8]) -> Option<i64> {
    let (negative, digits) = match s {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, s),
    };
    match digits {
        [] => return None,
        // "0" is 0, but "-0" and leading zeros stay strings.
        [b'0'] => return (!negative).then_some(0),
        [b'0', ..] => return None,
        _ if digits.len() > 19 => return None,
        _ => {}
    }
    // Accumulated as a negative number, which reaches i64::MIN.
    let mut n: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_sub(i64::from(c - b'0'))?;
    }
    if negative {
        Some(n)
    } else {
        n.checked_neg()
    }
}

/// Appending failed: the next int key is already taken (it is `i64::MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextElementOccupied;

#[derive(Clone)]
struct Bucket {
    /// The int key itself, or the string key's hash.
    h: u64,
    /// `None` for int keys.
    key: Option<PhpStr>,
    /// `Value::Undef` marks a deleted bucket (a tombstone).
    val: Value,
}

#[derive(Clone)]
struct Hashed {
    buckets: Vec<Bucket>,
    index: HashTable<u32>,
    live: usize,
}

#[derive(Clone)]
enum Repr {
    Packed(Vec<Value>),
    Hashed(Hashed),
}

/// A PHP array (see the module docs).
pub struct PhpArray {
    repr: Repr,
    /// The next int key `$a[] = …` uses; `i64::MIN` means "no int key yet"
    /// (the next append uses 0), as in PHP 8.2.
    next_free: i64,
    /// Packed only: how many slots are holes (`Value::Undef`). The last
    /// slot is never one.
    holes: usize,
    /// The by-reference `foreach` loops over this array.
    iterators: Iterators,
}

/// Where a `foreach` by reference is in the array it iterates: the slot it
/// looks at next (PHP's `HashTableIterator::pos`). The loop holds one
/// handle and the array another, so the array can move the position when
/// it moves slots. A handle that only an array still holds belongs to a
/// loop that has ended; the array drops it the next time it looks.
#[derive(Clone, Debug)]
pub struct IterPos(Rc<Cell<u32>>);

impl IterPos {
    pub fn get(&self) -> usize {
        self.0.get() as usize
    }

    pub fn set(&self, pos: usize) {
        self.0.set(u32::try_from(pos).unwrap_or(u32::MAX));
    }

    fn is_abandoned(&self) -> bool {
        Rc::strong_count(&self.0) == 1
    }
}

/// An array's by-reference loops. Behind a `Cell` because a loop that
/// separates a shared array takes them along from the copy others still
/// hold (see [`PhpArray::move_iterators_to`]); boxed so that arrays, which
/// almost never have any, grow by one word only.
///
/// Also the array's internal pointer (PHP's `nInternalPointer`, what
/// `current()`, `next()` and `reset()` move): a slot position that the
/// same compactions move.
#[derive(Default)]
#[allow(clippy::box_collection)]
struct Iterators(Cell<Option<Box<Vec<IterPos>>>>, u32);

#[allow(clippy::box_collection)]
impl Iterators {
    /// The loops still running, if any.
    #[inline]
    fn live(&mut self) -> Option<&mut Vec<IterPos>> {
        let slot = self.0.get_mut();
        if let Some(v) = slot {
            v.retain(|it| !it.is_abandoned());
            if v.is_empty() {
                *slot = None;
            }
        }
        slot.as_deref_mut()
    }

    /// Loops at `from` continue at `to` (`zend_hash_iterators_update`).
    #[inline]
    fn update(&mut self, from: usize, to: usize) {
        if let Some(v) = self.live() {
            v.iter().filter(|it| it.get() == from).for_each(|it| it.set(to));
        }
    }

    /// The lowest position at or after `start` a loop is at, or `used`
    /// (`zend_hash_iterators_lower_pos`).
    fn lower_pos(&mut self, start: usize, used: usize) -> usize {
        self.live()
            .and_then(|v| v.iter().map(IterPos::get).filter(|&p| p >= start && p < used).min())
            .unwrap_or(used)
    }

    /// The slots were compacted (holes dropped, order kept): a loop goes on
    /// at the first live slot at or after its old one, as in
    /// `zend_hash_rehash`; `live_before[p]` counts the live slots below
    /// `p`, for `p` up to the old slot count.
    fn compacted(&mut self, live_before: &[usize]) {
        if let Some(&p) = live_before.get(self.1 as usize) {
            self.1 = p as u32;
        }
        if let Some(v) = self.live() {
            for it in v.iter() {
                if let Some(&p) = live_before.get(it.get()) {
                    it.set(p);
                }
            }
        }
    }

    fn take(&mut self) -> Option<Box<Vec<IterPos>>> {
        self.live();
        self.0.get_mut().take()
    }

    fn extend(&mut self, more: Option<Box<Vec<IterPos>>>) {
        if let Some(more) = more {
            match self.0.get_mut() {
                Some(v) => v.extend(*more),
                slot => *slot = Some(more),
            }
        }
    }
}

/// `live_before[p]` = live slots below `p`, for `p` in `0..=slots.len()`.
fn live_prefix<T>(slots: &[T], live: impl Fn(&T) -> bool) -> Vec<usize> {
    let mut out = Vec::with_capacity(slots.len() + 1);
    let mut n = 0;
    out.push(0);
    for s in slots {
        n += usize::from(live(s));
        out.push(n);
    }
    out
}

/// A copy (copy-on-write separation, PHP's `zend_array_dup`): an element
/// that is a reference no one else holds any more (left by a finished
/// `foreach` by reference, say) is copied as its value, as PHP does, so
/// the copy's elements are plain values while the original keeps its
/// references. The copy is not iterated by anyone.
impl Clone for PhpArray {
    fn clone(&self) -> PhpArray {
        // The copy has no loops of its own: a loop whose array was copied
        // under it starts the copy from its beginning, as in PHP 8.2.
        let mut copy = PhpArray {
            repr: self.repr.clone(),
            next_free: self.next_free,
            holes: self.holes,
            // The internal pointer is part of the value.
            iterators: Iterators(Cell::default(), self.iterators.1),
        };
        let values: &mut [Value] = match &mut copy.repr {
            Repr::Packed(v) => v,
            Repr::Hashed(_) => &mut [],
        };
        let source: *const PhpArray = self;
        values.iter_mut().for_each(|v| unref_lone(v, source));
        if let Repr::Hashed(h) = &mut copy.repr {
            h.buckets.iter_mut().for_each(|b| unref_lone(&mut b.val, source));
        }
        copy
    }
}

/// Freeing an array frees the arrays only it holds, and theirs, without
/// recursing: a chain of arrays nested millions deep (`$a = [$a]` in a
/// loop) would otherwise take a native stack frame per level and
/// overflow. Elements are released in one pass; an element that is the
/// last holder of an array (directly, or through a reference nobody else
/// holds) hands that array's elements to a work list instead of freeing
/// them from inside this call.
impl Drop for PhpArray {
    fn drop(&mut self) {
        if matches!(&self.repr, Repr::Packed(v) if v.is_empty()) {
            return;
        }
        let mut pending = Vec::new();
        let repr = std::mem::replace(&mut self.repr, Repr::Packed(Vec::new()));
        release_elements(repr, DROP_DEPTH, &mut pending);
        while let Some(repr) = pending.pop() {
            release_elements(repr, DROP_DEPTH, &mut pending);
        }
    }
}

/// How many levels of arrays held alone are freed by native recursion
/// before the rest go onto the work list: shallow structures, nearly all
/// of them, never touch the list, and a deep one cannot overflow the
/// stack.
const DROP_DEPTH: u32 = 32;

/// Drops the elements of `repr`: the elements of arrays they held alone
/// are dropped here while `depth` lasts, then moved onto `pending`.
fn release_elements(repr: Repr, depth: u32, pending: &mut Vec<Repr>) {
    match repr {
        Repr::Packed(values) => values.into_iter().for_each(|v| release(v, depth, pending)),
        Repr::Hashed(h) => h.buckets.into_iter().for_each(|b| release(b.val, depth, pending)),
    }
}

#[inline]
fn release(v: Value, depth: u32, pending: &mut Vec<Repr>) {
    match v {
        Value::Arr(mut a) => release_array(&mut a, depth, pending),
        Value::Ref(r) => {
            if let Some(Value::Arr(mut a)) = r.into_inner() {
                release_array(&mut a, depth, pending);
            }
        }
        other => other.release(),
    }
}

/// Empties an array this element held alone (its handle is dropped next
/// and finds nothing left to free).
#[inline]
fn release_array(a: &mut Rc<PhpArray>, depth: u32, pending: &mut Vec<Repr>) {
    let Some(inner) = Rc::get_mut(a) else { return };
    if matches!(&inner.repr, Repr::Packed(v) if v.is_empty()) {
        return;
    }
    let repr = std::mem::replace(&mut inner.repr, Repr::Packed(Vec::new()));
    match depth.checked_sub(1) {
        Some(depth) => release_elements(repr, depth, pending),
        None => pending.push(repr),
    }
}

/// A copied element that is a reference held only by the original and
/// the copy becomes its value in the copy, unless that value is the
/// array being copied (`$a[] = &$a`), whose copy keeps the reference, as
/// `zend_array_dup` does: writing to the copy's element then writes
/// through it.
#[inline]
fn unref_lone(v: &mut Value, source: *const PhpArray) {
    if let Value::Ref(r) = v {
        if r.count() == 2 {
            let inner = match r.try_borrow() {
                Ok(inner) => match &*inner {
                    Value::Arr(a) if std::ptr::eq(Rc::as_ptr(a), source) => return,
                    other => other.clone(),
                },
                // Being written: it is not the copy's alone to unwrap.
                Err(_) => return,
            };
            *v = inner;
        }
    }
}

/// How far past the end of a packed array an int key may land and keep it
/// packed (the slots between become holes): at least this many, or as
/// many as the array has, so sparse keys go to a hash.
const PACKED_GAP: usize = 8;

/// A key borrowed from an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyRef<'a> {
    Int(i64),
    Str(&'a PhpStr),
}

impl KeyRef<'_> {
    pub fn to_key(self) -> Key {
        match self {
            KeyRef::Int(n) => Key::Int(n),
            KeyRef::Str(s) => Key::Str(s.clone()),
        }
    }

    pub fn to_value(self) -> Value {
        match self {
            KeyRef::Int(n) => Value::Int(n),
            KeyRef::Str(s) => Value::Str(s.clone()),
        }
    }
}

/// Whether two different strings with the same hash hold the same bytes:
/// out of line, so that the probe loop around it keeps its registers for
/// the common case, the same string (a literal key) or another hash.
#[inline(never)]
fn same_bytes(a: &PhpStr, b: &PhpStr) -> bool {
    a.as_bytes() == b.as_bytes()
}

/// Spreads a stored hash for the table (int keys are stored as-is, and
/// hashbrown looks at the top bits).
#[inline]
fn table_hash(h: u64) -> u64 {
    (h ^ (h >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Default for PhpArray {
    fn default() -> Self {
        PhpArray::new()
    }
}

impl PhpArray {
    /// A new empty array (no int key used yet).
    pub fn new() -> PhpArray {
        PhpArray {
            repr: Repr::Packed(Vec::new()),
            next_free: i64::MIN,
            holes: 0,
            iterators: Iterators::default(),
        }
    }

    pub fn with_capacity(n: usize) -> PhpArray {
        PhpArray {
            repr: Repr::Packed(Vec::with_capacity(n)),
            next_free: i64::MIN,
            holes: 0,
            iterators: Iterators::default(),
        }
    }

    /// A packed list `[v0, v1, …]`.
    pub fn from_list(values: Vec<Value>) -> PhpArray {
        let next_free = if values.is_empty() {
            i64::MIN
        } else {
            values.len() as i64
        };
        PhpArray {
            repr: Repr::Packed(values),
            next_free,
            holes: 0,
            iterators: Iterators::default(),
        }
    }

    /// The empty array literal `[]`: PHP 8.2 copies it from a shared empty
    /// array whose next free key is 0, so `$a = []; $a[-5] = 1; $a[] = 2;`
    /// puts 2 at key 0 (while a fresh array would use -4).
    pub fn empty_literal() -> PhpArray {
        PhpArray {
            repr: Repr::Packed(Vec::new()),
            next_free: 0,
            holes: 0,
            iterators: Iterators::default(),
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Packed(v) => v.len() - self.holes,
            Repr::Hashed(h) => h.live,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the keys are exactly `0..len` in order (a JSON list).
    pub fn is_list(&self) -> bool {
        match &self.repr {
            Repr::Packed(_) if self.holes == 0 => true,
            _ => self.iter().enumerate().all(|(i, (k, _))| k == KeyRef::Int(i as i64)),
        }
    }

    pub fn is_packed(&self) -> bool {
        matches!(self.repr, Repr::Packed(_))
    }

    /// The int key the next append would use.
    #[inline]
    pub fn next_free(&self) -> i64 {
        if self.next_free == i64::MIN {
            0
        } else {
            self.next_free
        }
    }

    /// Sets the next free int key (array_pop and friends adjust it).
    pub fn set_next_free(&mut self, n: i64) {
        self.next_free = n;
    }

    #[inline]
    fn note_int_key(&mut self, k: i64) {
        if k >= self.next_free {
            self.next_free = if k < i64::MAX { k + 1 } else { i64::MAX };
        }
    }

    /// The hash form, converting a packed array (its holes dropped, loops
    /// moved along), and the array's loops.
    #[inline]
    fn make_hashed(&mut self) -> (&mut Hashed, &mut Iterators) {
        if let Repr::Packed(values) = &mut self.repr {
            let values = std::mem::take(values);
            let live = values.len() - self.holes;
            if self.holes > 0 && (self.iterators.live().is_some() || self.iterators.1 != 0) {
                let before = live_prefix(&values, |v| !matches!(v, Value::Undef));
                self.iterators.compacted(&before);
            }
            self.holes = 0;
            let mut h = Hashed {
                buckets: Vec::with_capacity(live + 1),
                index: HashTable::with_capacity(live + 1),
                live,
            };
            for (i, val) in values.into_iter().enumerate() {
                if let Value::Undef = val {
                    continue;
                }
                h.buckets.push(Bucket {
                    h: i as u64,
                    key: None,
                    val,
                });
            }
            let Hashed { buckets, index, .. } = &mut h;
            for (i, b) in buckets.iter().enumerate() {
                index.insert_unique(table_hash(b.h), i as u32, |&j| table_hash(buckets[j as usize].h));
            }
            self.repr = Repr::Hashed(h);
        }
        match &mut self.repr {
            Repr::Hashed(h) => (h, &mut self.iterators),
            Repr::Packed(_) => unreachable!(),
        }
    }

    #[inline]
    pub fn get_int(&self, k: i64) -> Option<&Value> {
        match &self.repr {
            Repr::Packed(v) => usize::try_from(k)
                .ok()
                .and_then(|i| v.get(i))
                .filter(|v| !matches!(v, Value::Undef)),
            Repr::Hashed(h) => h.find_int(k).map(|i| &h.buckets[i].val),
        }
    }

    /// Mutable access to the element with int key `k`, if present.
    #[inline]
    pub fn get_int_mut(&mut self, k: i64) -> Option<&mut Value> {
        match &mut self.repr {
            Repr::Packed(v) => usize::try_from(k)
                .ok()
                .and_then(move |i| v.get_mut(i))
                .filter(|v| !matches!(v, Value::Undef)),
            Repr::Hashed(h) => h.find_int(k).map(move |i| &mut h.buckets[i].val),
        }
    }

    #[inline]
    pub fn get_str(&self, s: &[u8]) -> Option<&Value> {
        match &self.repr {
            Repr::Packed(_) => None,
            Repr::Hashed(h) => h.find_str(s, str_hash(s)).map(|i| &h.buckets[i].val),
        }
    }

    /// As [`PhpArray::get_str`], for a key held as a string value: its
    /// hash is the one the string keeps, and a bucket holding the same
    /// string (a script's literal key) matches without comparing bytes.
    #[inline]
    pub fn get_str_key(&self, s: &PhpStr) -> Option<&Value> {
        match &self.repr {
            Repr::Packed(_) => None,
            Repr::Hashed(h) => h.find_php_str(s).map(|i| &h.buckets[i].val),
        }
    }

    /// As [`PhpArray::get_str_key`], for writing.
    #[inline]
    pub fn get_str_key_mut(&mut self, s: &PhpStr) -> Option<&mut Value> {
        match &mut self.repr {
            Repr::Packed(_) => None,
            Repr::Hashed(h) => h.find_php_str(s).map(move |i| &mut h.buckets[i].val),
        }
    }

    /// Mutable access to the element with string key `s` (a string that
    /// stays a string key: see [`canonical_int`]), if present.
    #[inline]
    pub fn get_str_mut(&mut self, s: &[u8]) -> Option<&mut Value> {
        match &mut self.repr {
            Repr::Packed(_) => None,
            Repr::Hashed(h) => h.find_str(s, str_hash(s)).map(move |i| &mut h.buckets[i].val),
        }
    }

    #[inline]
    pub fn get(&self, key: &Key) -> Option<&Value> {
        match key {
            Key::Int(k) => self.get_int(*k),
            Key::Str(s) => self.get_str_key(s),
        }
    }

    #[inline]
    pub fn get_mut(&mut self, key: &Key) -> Option<&mut Value> {
        match key {
            Key::Int(k) => self.get_int_mut(*k),
            Key::Str(s) => self.get_str_key_mut(s),
        }
    }

    pub fn contains_key(&self, key: &Key) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to `val`, keeping the key's place if it exists.
    #[inline]
    pub fn insert(&mut self, key: Key, val: Value) {
        let (slot, _) = self.entry(key);
        *slot = val;
    }

    /// The value at `key`, inserted as null first if absent; the flag says
    /// whether it was already there (PHP warns on `$a['x'] += 1` if not).
    #[inline]
    pub fn entry(&mut self, key: Key) -> (&mut Value, bool) {
        match key {
            Key::Int(k) => self.entry_int(k),
            Key::Str(s) => {
                let (h, iters) = self.make_hashed();
                let hv = s.hash_code();
                match h.find_php_str(&s) {
                    Some(i) => (&mut h.buckets[i].val, true),
                    None => {
                        let i = h.push(hv, Some(s), Value::Null, iters);
                        (&mut h.buckets[i].val, false)
                    }
                }
            }
        }
    }

    #[inline]
    fn entry_int(&mut self, k: i64) -> (&mut Value, bool) {
        if let Repr::Packed(v) = &mut self.repr {
            let len = v.len() as i64;
            if (0..len).contains(&k) && !matches!(v[k as usize], Value::Undef) {
                // Re-borrow to satisfy the borrow checker across the branch.
                let Repr::Packed(v) = &mut self.repr else {
                    unreachable!()
                };
                return (&mut v[k as usize], true);
            }
            // A new key past the end, not below one used before (the order
            // of a packed array is its key order), not too far.
            let gap_ok = k >= len && ((k - len) as u64) <= (len as u64).max(PACKED_GAP as u64);
            if gap_ok && (self.next_free == i64::MIN || self.next_free <= k) {
                self.note_int_key(k);
                let Repr::Packed(v) = &mut self.repr else {
                    unreachable!()
                };
                let gap = (k - len) as usize;
                v.resize_with(k as usize, || Value::Undef);
                self.holes += gap;
                v.push(Value::Null);
                return (v.last_mut().unwrap(), false);
            }
        }
        self.note_int_key(k);
        let (h, iters) = self.make_hashed();
        match h.find_int(k) {
            Some(i) => (&mut h.buckets[i].val, true),
            None => {
                let i = h.push(k as u64, None, Value::Null, iters);
                (&mut h.buckets[i].val, false)
            }
        }
    }

    /// `$a[] = val`.
    #[inline]
    pub fn push(&mut self, val: Value) -> Result<(), NextElementOccupied> {
        self.push_slot(val).map(|_| ())
    }

    /// `$a[] = val`, returning the new element.
    #[inline]
    pub fn push_slot(&mut self, val: Value) -> Result<&mut Value, NextElementOccupied> {
        let k = self.next_free();
        if k == i64::MAX && self.get_int(k).is_some() {
            return Err(NextElementOccupied);
        }
        let (slot, existed) = self.entry_int(k);
        if existed {
            return Err(NextElementOccupied);
        }
        *slot = val;
        Ok(slot)
    }

    /// Removes `key`, returning its value. In a packed array the slot
    /// becomes a hole (PHP 8 keeps it packed); loops at the removed slot
    /// go on at the next live one.
    pub fn remove(&mut self, key: &Key) -> Option<Value> {
        match (&self.repr, key) {
            (Repr::Packed(v), Key::Int(k)) => {
                let i = usize::try_from(*k).ok().filter(|&i| i < v.len())?;
                if matches!(v[i], Value::Undef) {
                    return None;
                }
                Some(self.remove_packed_at(i))
            }
            (Repr::Packed(_), Key::Str(_)) => None,
            (Repr::Hashed(h), _) => {
                let i = match key {
                    Key::Int(k) => h.find_int(*k)?,
                    Key::Str(s) => h.find_php_str(s)?,
                };
                let Repr::Hashed(h) = &mut self.repr else {
                    unreachable!()
                };
                Some(h.remove_at(i, &mut self.iterators))
            }
        }
    }

    /// Removes the live element at packed slot `i`.
    fn remove_packed_at(&mut self, i: usize) -> Value {
        let Repr::Packed(v) = &mut self.repr else {
            unreachable!()
        };
        if self.iterators.live().is_some() {
            let next = (i + 1..v.len())
                .find(|&j| !matches!(v[j], Value::Undef))
                .unwrap_or(v.len());
            self.iterators.update(i, next);
        }
        if i + 1 == v.len() {
            let val = v.pop().unwrap_or_default();
            self.trim_holes();
            // As for hashed arrays (`remove_at`).
            self.iterators.1 = self.iterators.1.min(self.used() as u32);
            val
        } else {
            self.holes += 1;
            std::mem::take(&mut v[i])
        }
    }

    /// Removes and returns the last element (array_pop's core).
    pub fn pop(&mut self) -> Option<(Key, Value)> {
        // PHP resets the internal pointer here.
        self.iterators.1 = 0;
        match &mut self.repr {
            Repr::Packed(v) => {
                let i = v.len().checked_sub(1)?;
                Some((Key::Int(i as i64), self.remove_packed_at(i)))
            }
            Repr::Hashed(h) => {
                let i = h.buckets.iter().rposition(|b| !matches!(b.val, Value::Undef))?;
                let key = h.key_at(i).to_key();
                Some((key, h.remove_at(i, &mut self.iterators)))
            }
        }
    }

    /// Drops the holes a packed array's removed last element left at its
    /// end (the last slot is never a hole).
    fn trim_holes(&mut self) {
        if let Repr::Packed(v) = &mut self.repr {
            while let Some(Value::Undef) = v.last() {
                v.pop();
                self.holes -= 1;
            }
        }
    }

    /// Iterates over (key, value) in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { array: self, pos: 0 }
    }

    /// The values in order.
    pub fn values(&self) -> impl Iterator<Item = &Value> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// The first live element at or after position `pos`: its position,
    /// key and value. Positions are stable while the array is not
    /// compacted; foreach keeps one (PHP's `HashPosition`).
    #[inline]
    pub fn at_or_after(&self, pos: usize) -> Option<(usize, KeyRef<'_>, &Value)> {
        match &self.repr {
            Repr::Packed(v) => {
                let off = v.get(pos..)?.iter().position(|val| !matches!(val, Value::Undef))?;
                let i = pos + off;
                Some((i, KeyRef::Int(i as i64), &v[i]))
            }
            Repr::Hashed(h) => {
                let off = h
                    .buckets
                    .get(pos..)?
                    .iter()
                    .position(|b| !matches!(b.val, Value::Undef))?;
                let i = pos + off;
                Some((i, h.key_at(i), &h.buckets[i].val))
            }
        }
    }

    /// Mutable access to the value at position `pos` (see [`at_or_after`]).
    ///
    /// [`at_or_after`]: PhpArray::at_or_after
    pub fn value_at_mut(&mut self, pos: usize) -> Option<&mut Value> {
        match &mut self.repr {
            Repr::Packed(v) => v.get_mut(pos).filter(|v| !matches!(v, Value::Undef)),
            Repr::Hashed(h) => h
                .buckets
                .get_mut(pos)
                .filter(|b| !matches!(b.val, Value::Undef))
                .map(|b| &mut b.val),
        }
    }

    /// The element at the internal pointer (`current()`, `key()`): the
    /// first live one at or after it, as PHP's
    /// `zend_hash_get_current_pos` skips deleted slots.
    pub fn cursor_current(&self) -> Option<(KeyRef<'_>, &Value)> {
        self.at_or_after(self.iterators.1 as usize).map(|(_, k, v)| (k, v))
    }

    /// `next()`: the pointer moves past the current element; `None` when
    /// it runs off the end.
    pub fn cursor_next(&mut self) -> Option<(KeyRef<'_>, &Value)> {
        let used = self.used();
        let pos = match self.at_or_after(self.iterators.1 as usize) {
            Some((i, _, _)) => self.at_or_after(i + 1).map_or(used, |(j, _, _)| j),
            None => return None,
        };
        self.iterators.1 = pos as u32;
        self.cursor_current()
    }

    /// `prev()`: the pointer moves to the live element before the current
    /// one, or off the end when there is none.
    pub fn cursor_prev(&mut self) -> Option<(KeyRef<'_>, &Value)> {
        let used = self.used();
        let cur = self.at_or_after(self.iterators.1 as usize)?.0;
        let pos = (0..cur).rev().find(|&i| self.is_live_at(i)).unwrap_or(used);
        self.iterators.1 = pos as u32;
        self.cursor_current()
    }

    /// `reset()`: the pointer at the first element.
    pub fn cursor_reset(&mut self) -> Option<(KeyRef<'_>, &Value)> {
        self.iterators.1 = self.at_or_after(0).map_or(0, |(i, _, _)| i as u32);
        self.cursor_current()
    }

    /// `end()`: the pointer at the last element.
    pub fn cursor_end(&mut self) -> Option<(KeyRef<'_>, &Value)> {
        let used = self.used();
        self.iterators.1 = (0..used).rev().find(|&i| self.is_live_at(i)).unwrap_or(used) as u32;
        self.cursor_current()
    }

    /// The position of `key`, if present.
    pub fn position_of(&self, key: &Key) -> Option<usize> {
        match (&self.repr, key) {
            (Repr::Packed(v), Key::Int(k)) => usize::try_from(*k)
                .ok()
                .filter(|&i| i < v.len() && !matches!(v[i], Value::Undef)),
            (Repr::Packed(_), Key::Str(_)) => None,
            (Repr::Hashed(h), Key::Int(k)) => h.find_int(*k),
            (Repr::Hashed(h), Key::Str(s)) => h.find_php_str(s),
        }
    }

    /// How many slots there are, holes and tombstones included (PHP's
    /// `nNumUsed`): positions run up to it.
    fn used(&self) -> usize {
        match &self.repr {
            Repr::Packed(v) => v.len(),
            Repr::Hashed(h) => h.buckets.len(),
        }
    }

    fn is_live_at(&self, pos: usize) -> bool {
        match &self.repr {
            Repr::Packed(v) => !matches!(v[pos], Value::Undef),
            Repr::Hashed(h) => !matches!(h.buckets[pos].val, Value::Undef),
        }
    }

    /// Takes the live element at `pos` out, leaving its slot dead without
    /// any bookkeeping: only for an array being taken apart.
    fn take_at(&mut self, pos: usize) -> (Key, Value) {
        match &mut self.repr {
            Repr::Packed(v) => (Key::Int(pos as i64), std::mem::take(&mut v[pos])),
            Repr::Hashed(h) => {
                let key = h.key_at(pos).to_key();
                (key, std::mem::take(&mut h.buckets[pos].val))
            }
        }
    }

    /// Starts a by-reference loop at `pos` (`zend_hash_iterator_add`).
    pub fn add_iterator(&mut self, pos: usize) -> IterPos {
        // Finished loops go first: an array iterated again and again by
        // reference would otherwise keep every earlier loop's position
        // (and scan them on every step).
        self.iterators.live();
        let it = IterPos(Rc::new(Cell::new(0)));
        it.set(pos);
        self.iterators.extend(Some(Box::new(vec![it.clone()])));
        it
    }

    /// Whether the loop `it` iterates this array (rather than one it was
    /// copied from or replaced by).
    pub fn has_iterator(&self, it: &IterPos) -> bool {
        let all = self.iterators.0.take();
        let found = all.as_ref().is_some_and(|v| v.iter().any(|x| Rc::ptr_eq(&x.0, &it.0)));
        self.iterators.0.set(all);
        found
    }

    /// Hands this array's loops to `copy`, which replaces it where they
    /// iterate: PHP's loops would stay on the shared array, and here a
    /// loop that must change it separates it first.
    pub fn move_iterators_to(&self, copy: &mut PhpArray) {
        let all = self.iterators.0.take();
        copy.iterators.extend(all);
    }

    /// Hands `old`'s loops to this array, the result of sorting it, as
    /// `zend_hash_sort` leaves them: a packed array with holes is
    /// compacted with its loops moved along, other holes are squeezed out
    /// under them; then each loop goes on at the same offset.
    pub fn take_iterators_of_sorted(&mut self, old: &mut PhpArray) {
        if old.iterators.live().is_none() {
            return;
        }
        if let Repr::Packed(v) = &old.repr {
            if old.holes > 0 {
                let before = live_prefix(v, |v| !matches!(v, Value::Undef));
                old.iterators.compacted(&before);
            }
        }
        let loops = old.iterators.take();
        // PHP's sorted array has no holes; this one may (int keys kept in
        // order with gaps stay packed), so an offset counts live slots.
        if let (Some(v), Repr::Packed(slots)) = (&loops, &self.repr) {
            if self.holes > 0 {
                let live: Vec<usize> = (0..slots.len())
                    .filter(|&i| !matches!(slots[i], Value::Undef))
                    .collect();
                for it in v.iter() {
                    let p = it.get();
                    let to = match live.get(p) {
                        Some(&slot) => slot,
                        None => slots.len() + (p - live.len()),
                    };
                    it.set(to);
                }
            }
        }
        self.iterators.extend(loops);
    }

    /// `array_shift`: removes the first element and renumbers the int keys
    /// from 0 in place, moving the loops as PHP's does (in a packed array
    /// a loop is moved only while it sits on a live slot; one at the end
    /// stays there).
    pub fn shift(&mut self) -> Option<Value> {
        // PHP resets the internal pointer here.
        self.iterators.1 = 0;
        let (first, _, _) = self.at_or_after(0)?;
        let val = match &self.repr {
            Repr::Packed(_) => self.remove_packed_at(first),
            Repr::Hashed(_) => {
                let Repr::Hashed(h) = &mut self.repr else {
                    unreachable!()
                };
                h.remove_at(first, &mut self.iterators)
            }
        };
        let mut k = 0usize;
        match &mut self.repr {
            Repr::Packed(v) => {
                let used = v.len();
                let mut iter_pos = self.iterators.lower_pos(0, used);
                for idx in 0..used {
                    if matches!(v[idx], Value::Undef) {
                        continue;
                    }
                    if idx != k {
                        v[k] = std::mem::take(&mut v[idx]);
                        if idx == iter_pos {
                            self.iterators.update(idx, k);
                            iter_pos = self.iterators.lower_pos(iter_pos + 1, used);
                        }
                    }
                    k += 1;
                }
                v.truncate(k);
                self.holes = 0;
            }
            Repr::Hashed(h) => {
                let mut renumbered = false;
                for b in h.buckets.iter_mut() {
                    if matches!(b.val, Value::Undef) || b.key.is_some() {
                        continue;
                    }
                    if b.h != k as u64 {
                        b.h = k as u64;
                        renumbered = true;
                    }
                    k += 1;
                }
                if renumbered {
                    h.compact(&mut self.iterators);
                }
            }
        }
        self.next_free = k as i64;
        Some(val)
    }

    /// `array_unshift`: `values` first, then the elements with int keys
    /// renumbered; loops move on by as many slots as were added.
    pub fn unshift(&mut self, values: Vec<Value>) {
        // PHP resets the internal pointer here.
        self.iterators.1 = 0;
        let n = values.len();
        let mut out = PhpArray::new();
        for v in values {
            let _ = out.push(v);
        }
        for (k, v) in self.drain() {
            out.add_renumbered(k, v);
        }
        let iters = self.iterators.take();
        if let Some(v) = &iters {
            v.iter().for_each(|it| it.set(it.get() + n));
        }
        out.iterators.extend(iters);
        *self = out;
    }

    /// `array_splice`: removes `length` elements from the `offset`-th on
    /// (both already clamped), puts `replacement` in their place,
    /// renumbers int keys and returns the removed elements. Loops move as
    /// `php_splice`'s do when its result is not used: a loop on a kept
    /// element stays on it, one on a removed element goes on after the
    /// replacement.
    pub fn splice(&mut self, offset: usize, length: usize, replacement: Vec<Value>) -> PhpArray {
        // PHP resets the internal pointer here.
        self.iterators.1 = 0;
        let mut used = self.used();
        let mut out = PhpArray::new();
        let mut removed = PhpArray::new();
        let mut iter_pos = self.iterators.lower_pos(0, used);
        // The element at slot `idx` lands at `pos` in the result.
        let (mut pos, mut idx) = (0, 0);
        while pos < offset && idx < used {
            if self.is_live_at(idx) {
                self.splice_keep(&mut out, idx, pos, &mut iter_pos, used);
                pos += 1;
            }
            idx += 1;
        }
        // Slots below here were taken out but are still live to PHP, which
        // copies them: the end never shrinks below them.
        let kept_end = idx;
        let mut gone = 0;
        while gone < length && idx < used {
            if self.is_live_at(idx) {
                gone += 1;
                let next = (idx + 1..used).find(|&j| self.is_live_at(j)).unwrap_or(used);
                self.iterators.update(idx, next);
                let (k, v) = self.take_at(idx);
                removed.add_renumbered(k, v);
                if idx + 1 == used {
                    used = idx;
                    while used > kept_end && !self.is_live_at(used - 1) {
                        used -= 1;
                    }
                }
            }
            idx += 1;
        }
        iter_pos = self.iterators.lower_pos(iter_pos, used);
        for v in replacement {
            let _ = out.push(v);
            pos += 1;
        }
        while idx < used {
            if self.is_live_at(idx) {
                self.splice_keep(&mut out, idx, pos, &mut iter_pos, used);
                pos += 1;
            }
            idx += 1;
        }
        out.iterators.extend(self.iterators.take());
        *self = out;
        removed
    }

    /// Moves the element at slot `idx` to the end of `out` (position
    /// `pos`), taking the lowest loop still to be moved along when it is
    /// there.
    fn splice_keep(&mut self, out: &mut PhpArray, idx: usize, pos: usize, iter_pos: &mut usize, used: usize) {
        let (k, v) = self.take_at(idx);
        out.add_renumbered(k, v);
        if idx == *iter_pos {
            if idx != pos {
                self.iterators.update(idx, pos);
            }
            *iter_pos = self.iterators.lower_pos(*iter_pos + 1, used);
        }
    }

    /// Adds an element the way the rebuilding functions do: a string key
    /// is kept, an int key becomes the next free one.
    fn add_renumbered(&mut self, k: Key, v: Value) {
        match k {
            Key::Str(s) => self.insert(Key::Str(s), v),
            Key::Int(_) => {
                let _ = self.push(v);
            }
        }
    }

    /// Mutable iteration over the values, in order.
    pub fn values_mut(&mut self) -> Box<dyn Iterator<Item = &mut Value> + '_> {
        match &mut self.repr {
            Repr::Packed(v) => Box::new(v.iter_mut().filter(|v| !matches!(v, Value::Undef))),
            Repr::Hashed(h) => Box::new(
                h.buckets
                    .iter_mut()
                    .filter(|b| !matches!(b.val, Value::Undef))
                    .map(|b| &mut b.val),
            ),
        }
    }

    /// Takes the elements out as (key, value) pairs, leaving it empty.
    pub fn drain(&mut self) -> Vec<(Key, Value)> {
        let repr = std::mem::replace(&mut self.repr, Repr::Packed(Vec::new()));
        self.holes = 0;
        match repr {
            Repr::Packed(v) => v
                .into_iter()
                .enumerate()
                .filter(|(_, v)| !matches!(v, Value::Undef))
                .map(|(i, v)| (Key::Int(i as i64), v))
                .collect(),
            Repr::Hashed(h) => h
                .buckets
                .into_iter()
                .filter(|b| !matches!(b.val, Value::Undef))
                .map(|b| {
                    let key = match b.key {
                        Some(s) => Key::Str(s),
                        None => Key::Int(b.h as i64),
                    };
                    (key, b.val)
                })
                .collect(),
        }
    }

    /// An array of `pairs` in order (later duplicates overwrite earlier).
    pub fn from_pairs(pairs: impl IntoIterator<Item = (Key, Value)>) -> PhpArray {
        let mut a = PhpArray::new();
        for (k, v) in pairs {
            a.insert(k, v);
        }
        a
    }
}

impl Hashed {
    #[inline]
    fn find_int(&self, k: i64) -> Option<usize> {
        let hv = k as u64;
        self.index
            .find(table_hash(hv), |&i| {
                let b = &self.buckets[i as usize];
                b.h == hv && b.key.is_none()
            })
            .map(|&i| i as usize)
    }

    #[inline]
    fn find_str(&self, s: &[u8], hv: u64) -> Option<usize> {
        self.index
            .find(table_hash(hv), |&i| {
                let b = &self.buckets[i as usize];
                b.h == hv && b.key.as_ref().is_some_and(|k| k.as_bytes() == s)
            })
            .map(|&i| i as usize)
    }

    #[inline(always)]
    fn find_php_str(&self, s: &PhpStr) -> Option<usize> {
        let hv = s.hash_code();
        self.index
            .find(table_hash(hv), |&i| {
                let b = &self.buckets[i as usize];
                b.h == hv && b.key.as_ref().is_some_and(|k| k.ptr_eq(s) || same_bytes(k, s))
            })
            .map(|&i| i as usize)
    }

    fn key_at(&self, i: usize) -> KeyRef<'_> {
        let b = &self.buckets[i];
        match &b.key {
            Some(s) => KeyRef::Str(s),
            None => KeyRef::Int(b.h as i64),
        }
    }

    fn push(&mut self, h: u64, key: Option<PhpStr>, val: Value, iters: &mut Iterators) -> usize {
        if self.buckets.len() >= 8 && self.buckets.len() - self.live > self.live {
            self.compact(iters);
        }
        let i = self.buckets.len();
        let buckets = &self.buckets;
        self.index
            .insert_unique(table_hash(h), i as u32, |&j| table_hash(buckets[j as usize].h));
        self.buckets.push(Bucket { h, key, val });
        self.live += 1;
        i
    }

    /// Removes the live bucket `i`: loops there go on at the next live
    /// one, and tombstones at the end are dropped (PHP's `nNumUsed`
    /// shrinks the same way, leaving loops past the end where they are).
    fn remove_at(&mut self, i: usize, iters: &mut Iterators) -> Value {
        if iters.live().is_some() {
            let next = (i + 1..self.buckets.len())
                .find(|&j| !matches!(self.buckets[j].val, Value::Undef))
                .unwrap_or(self.buckets.len());
            iters.update(i, next);
        }
        let h = self.buckets[i].h;
        if let Ok(entry) = self.index.find_entry(table_hash(h), |&j| j as usize == i) {
            entry.remove();
        }
        self.live -= 1;
        let b = &mut self.buckets[i];
        b.key = None;
        let val = std::mem::replace(&mut b.val, Value::Undef);
        while let Some(Bucket { val: Value::Undef, .. }) = self.buckets.last() {
            self.buckets.pop();
        }
        // An internal pointer past the end stays just past it, so that an
        // element appended next is current (PHP clamps it to `nNumUsed`).
        iters.1 = iters.1.min(self.buckets.len() as u32);
        val
    }

    /// Drops tombstones and rebuilds the index.
    fn compact(&mut self, iters: &mut Iterators) {
        if iters.live().is_some() || iters.1 != 0 {
            let before = live_prefix(&self.buckets, |b| !matches!(b.val, Value::Undef));
            iters.compacted(&before);
        }
        self.buckets.retain(|b| !matches!(b.val, Value::Undef));
        self.rebuild_index();
    }

    fn rebuild_index(&mut self) {
        self.index.clear();
        let buckets = &self.buckets;
        for (i, b) in buckets.iter().enumerate() {
            self.index
                .insert_unique(table_hash(b.h), i as u32, |&j| table_hash(buckets[j as usize].h));
        }
    }
}

/// Iterator over an array's (key, value) pairs.
pub struct Iter<'a> {
    array: &'a PhpArray,
    pos: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (KeyRef<'a>, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        let (i, k, v) = self.array.at_or_after(self.pos)?;
        self.pos = i + 1;
        Some((k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.array.len()))
    }
}

impl std::fmt::Debug for PhpArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freeing_deeply_nested_arrays_does_not_recurse() {
        // Deeper than any test thread's native stack could take with a
        // frame per level: by value, through references, and hashed.
        // (Miri interprets every level; a few thousand still need the
        // loop rather than recursion to free them.)
        let depth = if cfg!(miri) { 3_000 } else { 1_000_000 };
        let mut v = Value::Int(1);
        for i in 0..depth {
            v = match i % 3 {
                0 => Value::arr(PhpArray::from_list(vec![v])),
                1 => Value::arr(PhpArray::from_list(vec![Value::Ref(crate::PhpRef::new(
                    v,
                    &mut crate::gc::Collector::new(),
                ))])),
                _ => {
                    let mut a = PhpArray::new();
                    a.insert(Key::from_bytes(b"k"), v);
                    Value::arr(a)
                }
            };
        }
        drop(v);
    }

    #[test]
    fn freeing_an_array_leaves_shared_elements_alive() {
        let shared = Rc::new(PhpArray::from_list(vec![Value::Int(5)]));
        let r = crate::PhpRef::new(Value::Arr(shared.clone()), &mut crate::gc::Collector::new());
        let outer = PhpArray::from_list(vec![Value::Arr(shared.clone()), Value::Ref(r.clone())]);
        drop(outer);
        assert_eq!(Rc::strong_count(&shared), 2);
        assert_eq!(r.count(), 1);
        assert_eq!(r.get(), Value::Arr(shared));
    }

    #[test]
    fn canonical_ints_are_the_strings_php_turns_into_int_keys() {
        let ints: &[(&[u8], i64)] = &[
            (b"0", 0),
            (b"7", 7),
            (b"-7", -7),
            (b"123456", 123456),
            (b"9223372036854775807", i64::MAX),
            (b"-9223372036854775808", i64::MIN),
        ];
        for &(s, n) in ints {
            assert_eq!(canonical_int(s), Some(n), "{:?}", String::from_utf8_lossy(s));
        }
        let strings: &[&[u8]] = &[
            b"",
            b"-",
            b"-0",
            b"00",
            b"007",
            b"1.0",
            b" 1",
            b"1 ",
            b"+1",
            b"1e3",
            b"0x1A",
            b"foo_1",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"99999999999999999999",
        ];
        for &s in strings {
            assert_eq!(canonical_int(s), None, "{:?}", String::from_utf8_lossy(s));
        }
    }

    fn keys(a: &PhpArray) -> Vec<Key> {
        a.iter().map(|(k, _)| k.to_key()).collect()
    }

    #[test]
    fn key_normalisation() {
        assert_eq!(Key::from_bytes(b"12"), Key::Int(12));
        assert_eq!(Key::from_bytes(b"-3"), Key::Int(-3));
        assert_eq!(Key::from_bytes(b"0"), Key::Int(0));
        for s in [
            &b"012"[..],
            b"-0",
            b"1.0",
            b" 1",
            b"1 ",
            b"",
            b"9223372036854775808",
            b"+1",
        ] {
            assert_eq!(Key::from_bytes(s), Key::Str(PhpStr::from(s)), "{s:?}");
        }
        assert_eq!(Key::from_bytes(b"-9223372036854775808"), Key::Int(i64::MIN));
    }

    #[test]
    fn packed_with_holes_until_out_of_order_or_sparse() {
        let mut a = PhpArray::new();
        for i in 0..10 {
            a.push(Value::Int(i)).unwrap();
        }
        assert!(a.is_packed());
        a.insert(Key::Int(10), Value::Int(10));
        assert!(a.is_packed());
        // A gap no wider than the array: holes 11..19.
        a.insert(Key::Int(20), Value::Int(20));
        assert!(a.is_packed());
        assert_eq!(a.len(), 12);
        assert_eq!(a.get_int(15), None);
        assert!(!a.is_list());
        a.push(Value::Int(21)).unwrap();
        assert_eq!(a.get_int(21), Some(&Value::Int(21)));
        assert_eq!(a.len(), 13);
        let ks: Vec<Key> = keys(&a);
        assert_eq!(ks.len(), 13);
        assert_eq!(ks[10..], [Key::Int(10), Key::Int(20), Key::Int(21)]);
        // Removing the last element drops the holes before it too.
        assert_eq!(a.remove(&Key::Int(21)), Some(Value::Int(21)));
        assert_eq!(a.remove(&Key::Int(20)), Some(Value::Int(20)));
        assert_eq!(a.pop(), Some((Key::Int(10), Value::Int(10))));
        assert_eq!(a.len(), 10);
        assert!(a.is_list());
        // Writing into a hole would put a key out of order: a hash.
        let mut b = PhpArray::new();
        b.insert(Key::Int(1), Value::Int(1));
        assert!(b.is_packed());
        assert_eq!(b.len(), 1);
        b.insert(Key::Int(0), Value::Int(0));
        assert!(!b.is_packed());
        assert_eq!(keys(&b), vec![Key::Int(1), Key::Int(0)]);
        // Far past the end: a hash.
        let mut c = PhpArray::new();
        c.insert(Key::Int(1000), Value::Null);
        assert!(!c.is_packed());
        // Holes are not copied into the hash.
        let mut d = PhpArray::new();
        d.insert(Key::Int(3), Value::Int(3));
        d.insert(Key::Str(PhpStr::from("k")), Value::Int(4));
        assert!(!d.is_packed());
        assert_eq!(d.len(), 2);
        assert_eq!(keys(&d), vec![Key::Int(3), Key::Str(PhpStr::from("k"))]);
        let mut e = PhpArray::new();
        e.insert(Key::Int(2), Value::Int(2));
        assert_eq!(e.drain(), vec![(Key::Int(2), Value::Int(2))]);
        assert_eq!(e.len(), 0);
    }

    #[test]
    fn next_free_follows_php_8_2() {
        let mut a = PhpArray::new();
        a.insert(Key::Int(-3), Value::Null);
        a.push(Value::Null).unwrap();
        assert_eq!(keys(&a), vec![Key::Int(-3), Key::Int(-2)]);

        let mut b = PhpArray::empty_literal();
        b.insert(Key::Int(-5), Value::Null);
        b.push(Value::Null).unwrap();
        assert_eq!(keys(&b), vec![Key::Int(-5), Key::Int(0)]);

        let mut c = PhpArray::from_list(vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
        c.remove(&Key::Int(2));
        c.push(Value::Int(9)).unwrap();
        assert_eq!(keys(&c), vec![Key::Int(0), Key::Int(1), Key::Int(3)]);

        let mut d = PhpArray::new();
        d.insert(Key::Int(i64::MAX), Value::Null);
        assert_eq!(d.push(Value::Null), Err(NextElementOccupied));
    }

    #[test]
    fn order_survives_removal_and_compaction() {
        let mut a = PhpArray::new();
        for i in 0..100 {
            a.insert(Key::Str(PhpStr::from(format!("k{i}"))), Value::Int(i));
        }
        for i in 0..90 {
            a.remove(&Key::Str(PhpStr::from(format!("k{i}"))));
        }
        a.insert(Key::Str(PhpStr::from("k5")), Value::Int(5));
        let got: Vec<i64> = a
            .values()
            .map(|v| match v {
                Value::Int(n) => *n,
                _ => -1,
            })
            .collect();
        assert_eq!(got, vec![90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 5]);
        assert_eq!(a.get_str(b"k95"), Some(&Value::Int(95)));
        assert_eq!(a.get_str(b"k3"), None);
    }

    #[test]
    fn entry_reports_existence() {
        let mut a = PhpArray::new();
        let (v, existed) = a.entry(Key::Str(PhpStr::from("x")));
        assert!(!existed);
        *v = Value::Int(1);
        let (v, existed) = a.entry(Key::Str(PhpStr::from("x")));
        assert!(existed);
        assert_eq!(*v, Value::Int(1));
    }

    #[test]
    fn pop_and_positions() {
        let mut a = PhpArray::from_pairs([
            (Key::Int(5), Value::Int(1)),
            (Key::Str(PhpStr::from("a")), Value::Int(2)),
        ]);
        assert_eq!(
            a.at_or_after(0).map(|(p, k, _)| (p, k.to_key())),
            Some((0, Key::Int(5)))
        );
        assert_eq!(a.pop(), Some((Key::Str(PhpStr::from("a")), Value::Int(2))));
        assert_eq!(a.len(), 1);
        assert_eq!(a.at_or_after(1), None);
    }

    fn ints(a: &PhpArray) -> Vec<i64> {
        a.values()
            .map(|v| match v {
                Value::Int(n) => *n,
                _ => -1,
            })
            .collect()
    }

    /// The value a loop at `it` would visit next.
    fn next_at(a: &PhpArray, it: &IterPos) -> Option<i64> {
        a.at_or_after(it.get()).map(|(_, _, v)| match v {
            Value::Int(n) => *n,
            _ => -1,
        })
    }

    #[test]
    fn removal_leaves_a_packed_hole_and_moves_loops_on() {
        let mut a = PhpArray::from_list((0..5).map(Value::Int).collect());
        let it = a.add_iterator(2);
        assert_eq!(a.remove(&Key::Int(2)), Some(Value::Int(2)));
        assert!(a.is_packed());
        assert_eq!(it.get(), 3);
        assert_eq!(a.remove(&Key::Int(4)), Some(Value::Int(4)));
        assert_eq!(next_at(&a, &it), Some(3));
        // Converting to a hash drops the hole and moves the loop with it.
        a.insert(Key::Str(PhpStr::from("s")), Value::Int(9));
        assert!(!a.is_packed());
        assert_eq!(it.get(), 2);
        assert_eq!(next_at(&a, &it), Some(3));
        // A copy is iterated by nobody.
        let copy = a.clone();
        assert!(a.has_iterator(&it) && !copy.has_iterator(&it));
    }

    #[test]
    fn hash_removal_at_the_end_shrinks_the_slots() {
        let mut a = PhpArray::from_pairs((0..3).map(|i| (Key::Str(PhpStr::from(format!("k{i}"))), Value::Int(i))));
        let it = a.add_iterator(3);
        a.remove(&Key::Str(PhpStr::from("k2")));
        // The loop stays past the end: the next new element takes slot 2
        // and is skipped, the one after is seen (as in PHP).
        a.insert(Key::Str(PhpStr::from("x")), Value::Int(7));
        assert_eq!(next_at(&a, &it), None);
        a.insert(Key::Str(PhpStr::from("y")), Value::Int(8));
        assert_eq!(next_at(&a, &it), Some(8));
    }

    #[test]
    fn loops_follow_shift_unshift_and_splice() {
        let mut a = PhpArray::from_list((0..4).map(Value::Int).collect());
        let it = a.add_iterator(2);
        assert_eq!(a.shift(), Some(Value::Int(0)));
        assert_eq!((it.get(), next_at(&a, &it)), (1, Some(2)));
        a.unshift(vec![Value::Int(10), Value::Int(11)]);
        assert_eq!(ints(&a), vec![10, 11, 1, 2, 3]);
        assert_eq!(next_at(&a, &it), Some(2));
        let removed = a.splice(2, 2, vec![Value::Int(20)]);
        assert_eq!(ints(&removed), vec![1, 2]);
        assert_eq!(ints(&a), vec![10, 11, 20, 3]);
        // The loop was on a removed element: it goes on after the
        // replacement.
        assert_eq!(next_at(&a, &it), Some(3));
        assert_eq!(a.next_free(), 4);
    }

    #[test]
    fn an_ended_loop_is_forgotten() {
        let mut a = PhpArray::from_list(vec![Value::Int(1), Value::Int(2)]);
        let it = a.add_iterator(0);
        drop(it);
        a.remove(&Key::Int(0));
        assert!(a.iterators.live().is_none());
    }

    #[test]
    fn a_sort_keeps_the_loops_offset() {
        // [_, 1, 2, 3, 4] with the loop before 3: PHP compacts (the loop
        // is then at offset 2) and goes on at the same offset in the
        // sorted array, here packed again with a hole before it.
        let mut old = PhpArray::from_list((0..5).map(Value::Int).collect());
        old.remove(&Key::Int(0));
        let it = old.add_iterator(3);
        let mut sorted = PhpArray::new();
        for k in [1, 2, 3, 4] {
            sorted.insert(Key::Int(k), Value::Int(k));
        }
        sorted.take_iterators_of_sorted(&mut old);
        assert_eq!(next_at(&sorted, &it), Some(3));
        assert!(!old.has_iterator(&it) && sorted.has_iterator(&it));
    }
}
