//! PHP byte strings: one pointer wide, refcounted with copy-on-write, or
//! interned.
//!
//! A [`PhpStr`] is either a refcounted string (an `Rc` of its bytes,
//! mutated in place when nobody else holds it, as PHP appends to an
//! unshared `zend_string`) or an *interned* string: an immutable string owned by an
//! [`InternedStrings`] table (a compiled script's literals), which is never
//! refcounted, like PHP's `IS_STR_INTERNED`. Interned strings are why a
//! compiled script can be shared by many threads: copying a literal into a
//! register touches no counter.
//!
//! Both kinds live behind one thin pointer; the low bit tells them apart
//! (the pointee is 8-byte aligned, so the bit is free). This module holds
//! all the `unsafe` for that, with the invariants spelled out at each site.
//!
//! Like a `zend_string`, a string keeps its hash once computed
//! ([`PhpStr::hash_code`]): an array looks a string key up without hashing
//! it again, and a script's literals are hashed when they are interned.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

const INTERNED: usize = 1;

/// What a string's pointer points at.
struct Data {
    bytes: Vec<u8>,
    /// [`bytes_hash`] of the bytes once computed, 0 before. Atomic because
    /// an interned string is read by many threads; every access is
    /// `Relaxed` (a plain load or store): any thread that writes it writes
    /// the same value, and nothing else is ordered by it.
    hash: AtomicU64,
}

impl Data {
    const fn new(bytes: Vec<u8>) -> Data {
        Data {
            bytes,
            hash: AtomicU64::new(0),
        }
    }

    /// With its hash computed now (an interned string's, which is never
    /// written again).
    fn hashed(bytes: Vec<u8>) -> Data {
        let hash = AtomicU64::new(bytes_hash(&bytes));
        Data { bytes, hash }
    }
}

/// The hash of a string as PHP arrays use it: the same for the same bytes
/// in every thread and run, and never 0 (0 marks a hash not computed yet).
/// foldhash's byte hash with a fixed seed, written directly: hashing a
/// slice through `Hash` would add its length as a second input.
#[inline]
pub fn bytes_hash(s: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    let mut h = foldhash::fast::FixedState::with_seed(0x5eed).build_hasher();
    h.write(s);
    h.finish().max(1)
}

/// The bytes of [`PhpStr::empty`].
static EMPTY: Data = Data::new(Vec::new());

/// The bytes of the 256 strings of [`PhpStr::one_byte`], made once per
/// process and shared by every thread (they are never written).
static ONE_BYTE: std::sync::LazyLock<Vec<Data>> =
    std::sync::LazyLock::new(|| (0..=255u8).map(|b| Data::hashed(vec![b])).collect());

/// A PHP string value (see the module docs).
pub struct PhpStr {
    /// Points at a `Data`: inside an `Rc` allocation when the low bit is
    /// clear, inside an [`InternedStrings`] table (or a static) when it is
    /// set.
    tagged: NonNull<u8>,
    /// Refcounted strings are `!Send`/`!Sync`, like the `Rc` they hold.
    _rc: PhantomData<Rc<Vec<u8>>>,
}

impl PhpStr {
    /// A refcounted string holding `bytes`.
    pub fn new(bytes: Vec<u8>) -> PhpStr {
        let raw = Rc::into_raw(Rc::new(Data::new(bytes))) as *mut u8;
        // SAFETY: `Rc::into_raw` never returns null.
        let tagged = unsafe { NonNull::new_unchecked(raw) };
        debug_assert_eq!(tagged.as_ptr().addr() & INTERNED, 0);
        PhpStr {
            tagged,
            _rc: PhantomData,
        }
    }

    /// The empty string (interned: it allocates nothing).
    #[inline]
    pub fn empty() -> PhpStr {
        PhpStr::static_interned(&EMPTY)
    }

    /// The one-byte string `b`, interned for the whole process, as PHP
    /// hands out `ZSTR_CHAR(b)`: reading `$s[$i]` or calling `chr()`
    /// makes no string.
    #[inline]
    pub fn one_byte(b: u8) -> PhpStr {
        PhpStr::static_interned(&ONE_BYTE[b as usize])
    }

    /// An interned string for bytes that live as long as the process.
    fn static_interned(v: &'static Data) -> PhpStr {
        let header: *const Data = v;
        let tagged = header.map_addr(|a| a | INTERNED).cast::<u8>().cast_mut();
        PhpStr {
            // SAFETY: a reference is non-null; setting bit 0 keeps it so.
            // The bytes are never written (`make_mut` copies an interned
            // string) and never freed (a static).
            tagged: unsafe { NonNull::new_unchecked(tagged) },
            _rc: PhantomData,
        }
    }

    #[inline(always)]
    fn is_interned_ptr(&self) -> bool {
        self.tagged.as_ptr().addr() & INTERNED != 0
    }

    fn data_ptr(&self) -> *const Data {
        // The tag is taken off the address only, so the pointer keeps its
        // provenance (strict provenance: Miri can check every use).
        self.tagged.as_ptr().map_addr(|a| a & !INTERNED).cast::<Data>()
    }

    fn data(&self) -> &Data {
        // SAFETY: the pointer is either a live `Rc<Data>` this value holds a
        // count on, or an interned string whose table outlives every
        // `PhpStr` made from it (the contract of `InternedStrings::get`).
        unsafe { &*self.data_ptr() }
    }

    /// [`bytes_hash`] of the string, computed once (PHP's `ZSTR_H`).
    #[inline]
    pub fn hash_code(&self) -> u64 {
        let d = self.data();
        match d.hash.load(Ordering::Relaxed) {
            0 => {
                let h = bytes_hash(&d.bytes);
                d.hash.store(h, Ordering::Relaxed);
                h
            }
            h => h,
        }
    }

    /// Whether both are the same string (not only equal bytes).
    #[inline(always)]
    pub fn ptr_eq(&self, other: &PhpStr) -> bool {
        self.tagged == other.tagged
    }

    /// Whether this string is interned (immutable, not refcounted).
    #[inline(always)]
    pub fn is_interned(&self) -> bool {
        self.is_interned_ptr()
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.data().bytes.as_slice()
    }

    /// Mutable access to the bytes, copying them first if they are shared
    /// or interned (copy-on-write).
    pub fn make_mut(&mut self) -> &mut Vec<u8> {
        if self.is_interned_ptr() || self.strong_count() > 1 {
            *self = PhpStr::new(self.as_bytes().to_vec());
        }
        // SAFETY: the string is refcounted (not interned) and this value
        // holds its only count, so no other reference to its data exists.
        let d = unsafe { &mut *(self.data_ptr() as *mut Data) };
        // The bytes may change: the hash is computed again when asked.
        *d.hash.get_mut() = 0;
        &mut d.bytes
    }

    /// The string's address: the same for every value sharing it.
    pub fn identity(&self) -> usize {
        self.data_ptr().addr()
    }

    /// How many values share this refcounted string (0 when interned).
    pub fn strong_count(&self) -> usize {
        if self.is_interned_ptr() {
            return 0;
        }
        // SAFETY: refcounted, so `data_ptr` came from `Rc::into_raw` and this
        // value keeps the allocation alive. `ManuallyDrop` keeps our count.
        let rc = std::mem::ManuallyDrop::new(unsafe { Rc::from_raw(self.data_ptr()) });
        Rc::strong_count(&rc)
    }

    /// Consumes the string, returning its bytes (copying only if shared).
    pub fn into_vec(mut self) -> Vec<u8> {
        std::mem::take(self.make_mut())
    }
}

impl Clone for PhpStr {
    fn clone(&self) -> PhpStr {
        if !self.is_interned_ptr() {
            // SAFETY: refcounted: the pointer came from `Rc::into_raw` and is
            // alive while `self` is.
            unsafe { Rc::increment_strong_count(self.data_ptr()) };
        }
        PhpStr {
            tagged: self.tagged,
            _rc: PhantomData,
        }
    }
}

impl Drop for PhpStr {
    fn drop(&mut self) {
        if !self.is_interned_ptr() {
            // SAFETY: refcounted: gives back the count this value held.
            unsafe { Rc::decrement_strong_count(self.data_ptr()) };
        }
    }
}

impl Deref for PhpStr {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl PartialEq for PhpStr {
    fn eq(&self, other: &PhpStr) -> bool {
        self.tagged == other.tagged || self.as_bytes() == other.as_bytes()
    }
}

impl Eq for PhpStr {}

impl Hash for PhpStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state)
    }
}

/// The bytes as text, invalid UTF-8 replaced (for messages that name a
/// class or member; PHP's names are bytes, nearly always ASCII).
impl Default for PhpStr {
    fn default() -> PhpStr {
        PhpStr::empty()
    }
}

impl fmt::Display for PhpStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.as_bytes()))
    }
}

impl fmt::Debug for PhpStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_bytes()))
    }
}

/// A copy of `bytes`; the empty and one-byte strings are the interned
/// ones, as PHP hands out `ZSTR_EMPTY_ALLOC()` and `ZSTR_CHAR()` for them
/// (a `substr`, a `str_split` into characters allocates nothing).
impl From<&[u8]> for PhpStr {
    fn from(bytes: &[u8]) -> PhpStr {
        match *bytes {
            [] => PhpStr::empty(),
            [b] => PhpStr::one_byte(b),
            _ => PhpStr::new(bytes.to_vec()),
        }
    }
}

impl From<&str> for PhpStr {
    fn from(s: &str) -> PhpStr {
        PhpStr::from(s.as_bytes())
    }
}

impl From<String> for PhpStr {
    fn from(s: String) -> PhpStr {
        PhpStr::new(s.into_bytes())
    }
}

impl From<Vec<u8>> for PhpStr {
    fn from(v: Vec<u8>) -> PhpStr {
        PhpStr::new(v)
    }
}

/// An owner of immutable strings (a compiled script's literals), from
/// which interned [`PhpStr`]s are made. It is `Send + Sync`: its strings
/// never change and interned `PhpStr`s never touch a counter.
#[derive(Default)]
pub struct InternedStrings {
    /// Boxed so each string has a stable address while the table grows;
    /// interned `PhpStr`s point at these.
    #[allow(clippy::vec_box)]
    strings: Vec<Box<Data>>,
    index: hashbrown::HashMap<Box<[u8]>, usize>,
}

impl InternedStrings {
    pub fn new() -> InternedStrings {
        InternedStrings::default()
    }

    /// Adds `bytes` (once) and returns its index.
    pub fn intern(&mut self, bytes: &[u8]) -> usize {
        if let Some(&i) = self.index.get(bytes) {
            return i;
        }
        let i = self.strings.len();
        self.strings.push(Box::new(Data::hashed(bytes.to_vec())));
        self.index.insert(bytes.into(), i);
        i
    }

    pub fn bytes(&self, i: usize) -> &[u8] {
        &self.strings[i].bytes
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// An interned `PhpStr` for string `i`.
    ///
    /// # Safety
    /// The returned value, and every clone of it, must be dropped before
    /// this table is dropped or its string `i` is otherwise freed. The
    /// engine keeps the table in the compiled script and clears every value
    /// of a request before it lets go of the script.
    pub unsafe fn get(&self, i: usize) -> PhpStr {
        let header: *const Data = &*self.strings[i];
        let tagged = header.map_addr(|a| a | INTERNED).cast::<u8>().cast_mut();
        PhpStr {
            // SAFETY: a Box's address is non-null; setting bit 0 keeps it so.
            tagged: unsafe { NonNull::new_unchecked(tagged) },
            _rc: PhantomData,
        }
    }
}

// SAFETY: the table owns plain byte vectors and an index; nothing in it is
// shared through a counter. (Auto traits already hold; this documents it.)
const _: fn() = || {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<InternedStrings>();
};

/// Runs `f` on `name` in ASCII lower case (the key of PHP's
/// case-insensitive function, method and class tables), without an
/// allocation for a name that is lower case already or fits a small
/// buffer: names are looked up on every dynamic call, and most are short.
#[inline]
pub fn with_lowercase<R>(name: &[u8], f: impl FnOnce(&[u8]) -> R) -> R {
    if !name.iter().any(u8::is_ascii_uppercase) {
        return f(name);
    }
    let mut buf = [0u8; 64];
    match buf.get_mut(..name.len()) {
        Some(b) => {
            b.copy_from_slice(name);
            b.make_ascii_lowercase();
            f(b)
        }
        None => f(&name.to_ascii_lowercase()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pointer_wide() {
        assert_eq!(std::mem::size_of::<PhpStr>(), 8);
        assert_eq!(std::mem::size_of::<Option<PhpStr>>(), 8);
    }

    #[test]
    fn copy_on_write() {
        let a = PhpStr::from("abc");
        let mut b = a.clone();
        assert_eq!(a.strong_count(), 2);
        b.make_mut().push(b'd');
        assert_eq!(&*a, b"abc");
        assert_eq!(&*b, b"abcd");
        assert_eq!(a.strong_count(), 1);
        // Unshared: appended in place, same allocation.
        let before = b.as_bytes().as_ptr();
        b.make_mut().reserve(0);
        assert_eq!(before, b.as_bytes().as_ptr());
    }

    #[test]
    fn interned_strings_are_not_counted() {
        let mut table = InternedStrings::new();
        let i = table.intern(b"hello");
        assert_eq!(table.intern(b"hello"), i);
        // SAFETY: every PhpStr made here is dropped before `table`.
        let s = unsafe { table.get(i) };
        let t = s.clone();
        assert!(s.is_interned());
        assert_eq!(s.strong_count(), 0);
        assert_eq!(&*t, b"hello");
        let mut u = t.clone();
        u.make_mut().extend_from_slice(b"!");
        assert!(!u.is_interned());
        assert_eq!(&*u, b"hello!");
        assert_eq!(&*s, b"hello");
        assert_eq!(s, PhpStr::from("hello"));
    }

    #[test]
    fn static_strings_are_interned_and_copied_on_write() {
        assert!(PhpStr::empty().is_interned());
        assert_eq!(&*PhpStr::empty(), b"");
        for b in [0u8, b'a', 255] {
            let s = PhpStr::one_byte(b);
            assert!(s.is_interned());
            assert_eq!(&*s, &[b]);
            assert_eq!(s.identity(), PhpStr::one_byte(b).identity());
        }
        let mut s = PhpStr::one_byte(b'x');
        s.make_mut().push(b'y');
        assert_eq!(&*s, b"xy");
        assert_eq!(&*PhpStr::one_byte(b'x'), b"x");
        let mut e = PhpStr::empty();
        e.make_mut().push(b'z');
        assert_eq!(&*PhpStr::empty(), b"");
        assert!(PhpStr::from("q").is_interned() && PhpStr::from(&b""[..]).is_interned());
        assert!(!PhpStr::from("qq").is_interned());
        // Used from another thread, the same bytes.
        let id = PhpStr::one_byte(7).identity();
        let other = std::thread::spawn(|| PhpStr::one_byte(7).identity()).join().unwrap();
        assert_eq!(id, other);
    }

    #[test]
    fn hash_follows_the_bytes() {
        let mut a = PhpStr::from("key");
        let h = a.hash_code();
        assert_eq!(h, bytes_hash(b"key"));
        assert_ne!(h, 0);
        assert_eq!(a.hash_code(), h);
        a.make_mut().push(b'!');
        assert_eq!(a.hash_code(), bytes_hash(b"key!"));
        let mut table = InternedStrings::new();
        let i = table.intern(b"key");
        // SAFETY: dropped before `table`.
        let s = unsafe { table.get(i) };
        assert_eq!(s.hash_code(), h);
        assert!(s.ptr_eq(&s.clone()) && !s.ptr_eq(&PhpStr::from("key")));
        assert_eq!(PhpStr::empty().hash_code(), bytes_hash(b""));
        assert_eq!(PhpStr::one_byte(b'k').hash_code(), bytes_hash(b"k"));
    }

    #[test]
    fn into_vec_takes_unshared_bytes() {
        let s = PhpStr::from("xyz");
        let shared = s.clone();
        assert_eq!(s.into_vec(), b"xyz");
        assert_eq!(&*shared, b"xyz");
    }

    #[test]
    fn lowercase_keys_whatever_the_length() {
        assert_eq!(with_lowercase(b"already", |k| k.to_vec()), b"already");
        assert_eq!(with_lowercase(b"applyDiscount", |k| k.to_vec()), b"applydiscount");
        let long = [b'A'; 100];
        assert_eq!(with_lowercase(&long, |k| k.to_vec()), vec![b'a'; 100]);
        assert_eq!(with_lowercase(b"", |k| k.len()), 0);
    }
}
