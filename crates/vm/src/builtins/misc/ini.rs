//! `parse_ini_string`: Zend's ini scanner (zend_ini_scanner.l) and parser
//! (zend_ini_parser.y) with ext/standard's callbacks that build the array.
//!
//! The scanner is re2c's longest-match over each state's rules, ties going
//! to the rule written first, and it is followed closely because its quirks
//! show: a label runs on to a `[` (`  [s]` is an offset, not a section),
//! `=` inside a value ends it, a comment needs a line end. PHP scans a
//! copy padded with NUL bytes and without bounds checks in its patterns;
//! a pattern whose class takes NUL runs into that padding at the end of
//! the input, where `YYFILL` ends the scan with the end-of-file token even
//! if a shorter match was already seen (so `a=b ;c` ends at `b`, and an
//! unterminated `'` is an end of file). [`Scanner::run`] reports that as
//! [`Fill`].
//!
//! The parser is bison's LALR(1) grammar written as recursive descent.
//! Its errors repeat bison's verbose messages: bison reduces by default
//! before it looks at a token, so an error is reported in the first state
//! that cannot reduce, naming the tokens that state shifts when there are
//! at most four.

use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::{cg, eg, Globals};

use crate::builtins::Args;
use crate::error::{warning, VmResult};

const SCANNER_NORMAL: i64 = 0;
const SCANNER_RAW: i64 = 1;
const SCANNER_TYPED: i64 = 2;

pub(crate) const CONSTANTS: &[(&str, i64)] = &[
    ("INI_SCANNER_NORMAL", SCANNER_NORMAL),
    ("INI_SCANNER_RAW", SCANNER_RAW),
    ("INI_SCANNER_TYPED", SCANNER_TYPED),
];

pub(super) fn parse_ini_string<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let sections = a.opt_bool(g, 1, false)?;
    let mode = a.opt_int(g, 2, SCANNER_NORMAL)?;
    if !(SCANNER_NORMAL..=SCANNER_TYPED).contains(&mode) {
        warning(g, "Invalid scanner mode");
        return Ok(Value::Bool(false));
    }
    // PHP hands the scanner a C string: it ends at the first NUL.
    let text = match s.iter().position(|&c| c == 0) {
        Some(n) => &s[..n],
        None => &s[..],
    };
    let mut p = Parser {
        g,
        lx: Scanner::new(text, mode),
        out: Builder::new(sections),
    };
    match p.statements() {
        Ok(()) => Ok(Value::arr(p.out.finish())),
        Err(msg) => {
            warning(g, &format!("{msg} in Unknown on line {}\n", p.lx.line));
            Ok(Value::Bool(false))
        }
    }
}

/// A value as the scanner and parser carry it: a string, or in
/// `INI_SCANNER_TYPED` mode what a value token stands for.
#[derive(Clone, Debug)]
enum V {
    S(Vec<u8>),
    Bool(bool),
    Null,
    Int(i64),
    Float(f64),
}

impl V {
    fn into_value(self) -> Value {
        match self {
            V::S(s) => Value::Str(PhpStr::from(s)),
            V::Bool(b) => Value::Bool(b),
            V::Null => Value::Null,
            V::Int(n) => Value::Int(n),
            V::Float(f) => Value::Float(f),
        }
    }
}

#[derive(Clone, Debug)]
enum Tok {
    End,
    Section,
    Raw(V),
    Constant(V),
    Number(V),
    Str(V),
    Whitespace(V),
    Label(V),
    Offset(V),
    DollarCurly,
    VarName(V),
    Quoted(V),
    True(V),
    False(V),
    Null(V),
    Eol,
    Char(u8),
}

/// The single-character tokens in bison's symbol order (the `%token`
/// list, then those `%left`, `%precedence` and the rules add).
const CHAR_ORDER: &[u8] = b"=:,.\"'^+-/*%$~<>?@{}|&!](";

impl Tok {
    /// Bison's symbol number, which orders "expecting" lists.
    fn symbol(&self) -> usize {
        match self {
            Tok::End => 0,
            Tok::Section => 1,
            Tok::Raw(_) => 2,
            Tok::Constant(_) => 3,
            Tok::Number(_) => 4,
            Tok::Str(_) => 5,
            Tok::Whitespace(_) => 6,
            Tok::Label(_) => 7,
            Tok::Offset(_) => 8,
            Tok::DollarCurly => 9,
            Tok::VarName(_) => 10,
            Tok::Quoted(_) => 11,
            Tok::True(_) => 12,
            Tok::False(_) => 13,
            Tok::Null(_) => 14,
            Tok::Eol => 15,
            Tok::Char(c) => 16 + CHAR_ORDER.iter().position(|x| x == c).unwrap_or(CHAR_ORDER.len()),
        }
    }

    fn name(&self) -> String {
        match self {
            Tok::End => "end of file".into(),
            Tok::Section => "TC_SECTION".into(),
            Tok::Raw(_) => "TC_RAW".into(),
            Tok::Constant(_) => "TC_CONSTANT".into(),
            Tok::Number(_) => "TC_NUMBER".into(),
            Tok::Str(_) => "TC_STRING".into(),
            Tok::Whitespace(_) => "TC_WHITESPACE".into(),
            Tok::Label(_) => "TC_LABEL".into(),
            Tok::Offset(_) => "TC_OFFSET".into(),
            Tok::DollarCurly => "TC_DOLLAR_CURLY".into(),
            Tok::VarName(_) => "TC_VARNAME".into(),
            Tok::Quoted(_) => "TC_QUOTED_STRING".into(),
            Tok::True(_) => "BOOL_TRUE".into(),
            Tok::False(_) => "BOOL_FALSE".into(),
            Tok::Null(_) => "NULL_NULL".into(),
            Tok::Eol => "END_OF_LINE".into(),
            Tok::Char(b'\'') => "'\\''".into(),
            Tok::Char(c) => format!("'{}'", *c as char),
        }
    }

    fn is_char(&self, c: u8) -> bool {
        matches!(self, Tok::Char(x) if *x == c)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Initial,
    Value,
    Raw,
    SectionRaw,
    SectionValue,
    Offset,
    DoubleQuotes,
    VarName,
}

/// A pattern ran into the NUL padding past the input (`YYFILL` stops).
struct Fill;

type Run = Result<usize, Fill>;

fn is_label(c: u8) -> bool {
    !b"=\n\r\t;&|^$~(){}!\"[".contains(&c)
}

fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

struct Scanner<'a> {
    s: &'a [u8],
    pos: usize,
    mode: i64,
    state: State,
    stack: Vec<State>,
    line: u32,
}

impl<'a> Scanner<'a> {
    fn new(s: &'a [u8], mode: i64) -> Self {
        Scanner {
            s,
            pos: 0,
            mode,
            state: State::Initial,
            stack: Vec::new(),
            line: 1,
        }
    }

    /// The byte at `i`, NUL past the end (PHP's padding).
    fn at(&self, i: usize) -> u8 {
        self.s.get(i).copied().unwrap_or(0)
    }

    /// How many bytes from `p` are in `class`; [`Fill`] if the run
    /// would go on into the padding.
    fn run(&self, p: usize, class: impl Fn(u8) -> bool) -> Run {
        let mut i = p;
        while i < self.s.len() && class(self.s[i]) {
            i += 1;
        }
        if i == self.s.len() && class(0) {
            return Err(Fill);
        }
        Ok(i - p)
    }

    fn blanks(&self, p: usize) -> usize {
        self.run(p, is_blank).unwrap_or(0)
    }

    fn newline(&self, p: usize) -> usize {
        match (self.at(p), self.at(p + 1)) {
            (b'\r', b'\n') => 2,
            (b'\r' | b'\n', _) => 1,
            _ => 0,
        }
    }

    fn lit(&self, p: usize, word: &[u8]) -> bool {
        self.s.get(p..p + word.len()) == Some(word)
    }

    /// `("w1"|"w2"|…){TABS_AND_SPACES}*`, in any case (PHP runs re2c
    /// with `--case-inverted`, so its double-quoted words ignore case).
    fn words(&self, p: usize, words: &[&[u8]]) -> usize {
        words
            .iter()
            .filter(|w| self.s.get(p..p + w.len()).is_some_and(|s| s.eq_ignore_ascii_case(w)))
            .map(|w| w.len() + self.blanks(p + w.len()))
            .max()
            .unwrap_or(0)
    }

    /// `{TABS_AND_SPACES}*{NEWLINE}`.
    fn blank_newline(&self, p: usize) -> usize {
        let b = self.blanks(p);
        match self.newline(p + b) {
            0 => 0,
            n => b + n,
        }
    }

    /// `{TABS_AND_SPACES}*[;][^\r\n]*{NEWLINE}`.
    fn comment(&self, p: usize) -> Run {
        let b = self.blanks(p);
        if self.at(p + b) != b';' {
            return Ok(0);
        }
        let body = self.run(p + b + 1, |c| c != b'\r' && c != b'\n')?;
        let end = p + b + 1 + body;
        Ok(match self.newline(end) {
            0 => 0,
            n => end + n - p,
        })
    }

    /// `{TABS_AND_SPACES}*` followed by `c`.
    fn blanks_then(&self, p: usize, c: u8) -> usize {
        let b = self.blanks(p);
        if self.at(p + b) == c {
            b + 1
        } else {
            0
        }
    }

    /// `"'"{SINGLE_QUOTED_CHARS}+"'"`.
    fn single_quoted(&self, p: usize) -> Run {
        if self.at(p) != b'\'' || self.at(p + 1) == b'\'' {
            return Ok(0);
        }
        let n = self.run(p + 1, |c| c != b'\'')?;
        Ok(n + 2)
    }

    /// `{CONSTANT}`.
    fn constant(&self, p: usize) -> usize {
        let c = self.at(p);
        if !(c.is_ascii_alphabetic() || c == b'_') {
            return 0;
        }
        1 + self.run(p + 1, |c| c.is_ascii_alphanumeric() || c == b'_').unwrap_or(0)
    }

    /// `{NUMBER}`: `[-]?[0-9]+`, `[0-9]*[.][0-9]+` or `[0-9]+[.][0-9]*`.
    fn number(&self, p: usize) -> usize {
        let digits = |i: usize| self.run(i, |c| c.is_ascii_digit()).unwrap_or(0);
        let minus = usize::from(self.at(p) == b'-');
        let lnum = match digits(p + minus) {
            0 => 0,
            n => minus + n,
        };
        let int = digits(p);
        let dnum = if self.at(p + int) == b'.' {
            let frac = digits(p + int + 1);
            if int + frac > 0 {
                int + 1 + frac
            } else {
                0
            }
        } else {
            0
        };
        lnum.max(dnum)
    }

    /// `{LITERAL_DOLLAR}` at `p`: `$` and a byte other than `{`, or `$\`
    /// and any byte.
    fn literal_dollar(&self, p: usize) -> Result<usize, Fill> {
        if self.at(p) != b'$' {
            return Ok(0);
        }
        if self.at(p + 1) == b'\\' {
            if p + 2 >= self.s.len() {
                return Err(Fill);
            }
            return Ok(3);
        }
        match self.at(p + 1) {
            b'{' | 0 => Ok(0),
            _ => Ok(2),
        }
    }

    /// `{VALUE_CHARS}+`.
    fn value_chars(&self, p: usize) -> Run {
        let mut i = p;
        loop {
            let c = self.at(i);
            if c == b'$' {
                match self.literal_dollar(i)? {
                    0 => break,
                    n => i += n,
                }
            } else if c != 0 && !b"= \t\n\r;&|^~()!\"'".contains(&c) {
                i += 1;
            } else {
                break;
            }
        }
        Ok(i - p)
    }

    /// `{SECTION_VALUE_CHARS}+`.
    fn section_value_chars(&self, p: usize) -> Run {
        let mut i = p;
        loop {
            if i >= self.s.len() {
                // NUL is one of the class's bytes.
                return if i > p { Err(Fill) } else { Ok(0) };
            }
            match self.s[i] {
                b'$' => match self.literal_dollar(i)? {
                    0 => break,
                    n => i += n,
                },
                b'\\' => {
                    if i + 1 >= self.s.len() {
                        return Err(Fill);
                    }
                    i += 2;
                }
                b'\n' | b'\r' | b';' | b'"' | b'\'' | b']' => break,
                _ => i += 1,
            }
        }
        Ok(i - p)
    }

    fn begin(&mut self, s: State) {
        self.state = s;
    }

    fn push(&mut self, s: State) {
        self.stack.push(self.state);
        self.state = s;
    }

    fn pop(&mut self) {
        self.state = self.stack.pop().unwrap_or(State::Initial);
    }

    /// `RETURN_TOKEN`: a value token's value, typed in typed mode when
    /// scanning a value.
    fn value(&self, kind: u8, text: &[u8]) -> V {
        let typed = self.mode == SCANNER_TYPED && matches!(self.state, State::Value | State::Raw);
        if typed {
            match kind {
                b't' => return V::Bool(true),
                b'f' => return V::Bool(false),
                b'n' => return V::Null,
                b'#' => {
                    if let Some(v) = typed_number(text) {
                        return v;
                    }
                }
                _ => {}
            }
        }
        V::S(text.to_vec())
    }

    /// The next token (`ini_lex`).
    fn next(&mut self) -> Tok {
        loop {
            let p = self.pos;
            if p >= self.s.len() {
                if matches!(self.state, State::Value | State::Raw) {
                    self.begin(State::Initial);
                    return Tok::Eol;
                }
                return Tok::End;
            }
            if p == 0 && self.s.len() > 3 && self.s.starts_with(b"\xef\xbb\xbf") {
                self.pos = 3;
                continue;
            }
            let r = match self.state {
                State::Initial => self.initial(p),
                State::Value => self.value_state(p),
                State::Raw => self.raw(p),
                State::SectionRaw => self.section_raw(p),
                State::SectionValue | State::Offset => self.section_value(p),
                State::DoubleQuotes => self.double_quotes(p),
                State::VarName => self.var_name(p),
            };
            match r {
                Ok(Some(t)) => return t,
                Ok(None) => continue,
                Err(Fill) => return Tok::End,
            }
        }
    }

    /// The longest of `cands` (rule, length), the first rule on a tie.
    fn pick(cands: &[(u8, Run)]) -> Result<(u8, usize), Fill> {
        let mut best = (0u8, 0usize);
        for &(rule, ref len) in cands {
            match len {
                Err(Fill) => return Err(Fill),
                Ok(n) if *n > best.1 => best = (rule, *n),
                _ => {}
            }
        }
        Ok(best)
    }

    fn trim_label(text: &[u8], extra: u8) -> &[u8] {
        let start = text.iter().position(|&c| !is_blank(c)).unwrap_or(text.len());
        let mut end = text.len();
        while end > start && (b"\n\r\t ".contains(&text[end - 1]) || text[end - 1] == extra) {
            end -= 1;
        }
        &text[start..end]
    }

    fn initial(&mut self, p: usize) -> Result<Option<Tok>, Fill> {
        let label = self.run(p, is_label)?;
        let offset = if label > 0 && self.at(p + label) == b'[' {
            label + 1 + self.blanks(p + label + 1)
        } else {
            0
        };
        let assign = self.blanks_then(p, b'=');
        let assign = if assign > 0 {
            assign + self.blanks(p + assign)
        } else {
            0
        };
        let token = usize::from(b":,.[]\"'()&|^+-/*=%$!~<>?@{}".contains(&self.at(p)));
        let (rule, n) = Self::pick(&[
            (1, Ok(usize::from(self.at(p) == b'['))),
            (2, Ok(offset)),
            (3, Ok(self.words(p, &[b"true", b"on", b"yes"]))),
            (4, Ok(self.words(p, &[b"false", b"off", b"no", b"none"]))),
            (5, Ok(self.words(p, &[b"null"]))),
            (6, Ok(label)),
            (7, Ok(assign)),
            (8, Ok(token)),
            (9, Ok(self.blanks(p))),
            (10, Ok(self.blank_newline(p))),
            (11, self.comment(p)),
            (12, Ok(1)),
        ])?;
        let text = &self.s[p..p + n];
        self.pos = p + n;
        Ok(Some(match rule {
            1 => {
                self.begin(if self.mode == SCANNER_RAW {
                    State::SectionRaw
                } else {
                    State::SectionValue
                });
                Tok::Section
            }
            2 => {
                let v = self.value(b's', Self::trim_label(text, b'['));
                self.begin(State::Offset);
                Tok::Offset(v)
            }
            3 => Tok::True(self.value(b't', b"1")),
            4 => Tok::False(self.value(b'f', b"")),
            5 => Tok::Null(self.value(b'n', b"")),
            6 => Tok::Label(self.value(b's', Self::trim_label(text, b' '))),
            7 => {
                self.begin(if self.mode == SCANNER_RAW {
                    State::Raw
                } else {
                    State::Value
                });
                Tok::Char(b'=')
            }
            8 => Tok::Char(text[0]),
            9 => return Ok(None),
            10 | 11 => {
                self.line += 1;
                Tok::Eol
            }
            _ => Tok::End,
        }))
    }

    fn value_state(&mut self, p: usize) -> Result<Option<Tok>, Fill> {
        let operator = if b"&|^~()!".contains(&self.at(p)) {
            1 + self.blanks(p + 1)
        } else {
            0
        };
        let (rule, n) = Self::pick(&[
            (1, self.single_quoted(p)),
            (2, Ok(if self.lit(p, b"${") { 2 } else { 0 })),
            (3, Ok(self.words(p, &[b"true", b"on", b"yes"]))),
            (4, Ok(self.words(p, &[b"false", b"off", b"no", b"none"]))),
            (5, Ok(self.words(p, &[b"null"]))),
            (6, Ok(self.blank_newline(p))),
            (7, Ok(self.constant(p))),
            (8, Ok(self.number(p))),
            (9, Ok(operator)),
            (10, Ok(usize::from(self.at(p) == b'='))),
            (11, self.value_chars(p)),
            (12, Ok(self.blanks_then(p, b'"'))),
            (13, Ok(self.blanks(p))),
            (14, self.comment(p)),
            (15, Ok(1)),
        ])?;
        let text = &self.s[p..p + n];
        self.pos = p + n;
        Ok(Some(match rule {
            1 => Tok::Raw(self.value(b's', &text[1..n - 1])),
            2 => {
                self.push(State::VarName);
                Tok::DollarCurly
            }
            3 => Tok::True(self.value(b't', b"1")),
            4 => Tok::False(self.value(b'f', b"")),
            5 => Tok::Null(self.value(b'n', b"")),
            6 | 14 => {
                self.begin(State::Initial);
                self.line += 1;
                Tok::Eol
            }
            7 => Tok::Constant(self.value(b's', text)),
            8 => Tok::Number(self.value(b'#', text)),
            9 => Tok::Char(text[0]),
            10 => {
                // `yyless(0)`: the `=` is scanned again, as a statement's.
                self.pos = p;
                self.begin(State::Initial);
                Tok::Eol
            }
            11 => Tok::Str(self.value(b's', text)),
            12 => {
                self.push(State::DoubleQuotes);
                Tok::Char(b'"')
            }
            13 => Tok::Whitespace(self.value(b's', text)),
            _ => {
                self.begin(State::Initial);
                Tok::Eol
            }
        }))
    }

    fn raw(&mut self, p: usize) -> Result<Option<Tok>, Fill> {
        let c = self.at(p);
        let (rule, n) = Self::pick(&[
            (1, Ok(usize::from(!b"\n\r;\0".contains(&c)))),
            (2, Ok(self.blank_newline(p))),
            (3, Ok(self.blanks(p))),
            (4, self.comment(p)),
            (5, Ok(1)),
        ])?;
        self.pos = p + n;
        Ok(match rule {
            1 => {
                // The rest of the line, up to a `;` outside a value that
                // starts with `"`.
                let mut start = p;
                while start < self.s.len() && is_blank(self.s[start]) {
                    start += 1;
                }
                let first = self.at(start);
                let mut cur = p + 1;
                let mut sc = None;
                while cur < self.s.len() {
                    match self.s[cur] {
                        b'\n' | b'\r' => break,
                        b';' => {
                            sc.get_or_insert(cur);
                        }
                        b'"' if first == b'"' => sc = None,
                        _ => {}
                    }
                    cur += 1;
                }
                self.pos = cur;
                let mut end = sc.unwrap_or(cur).max(start);
                while end > start && b"\n\r\t ".contains(&self.s[end - 1]) {
                    end -= 1;
                }
                let mut text = &self.s[start..end];
                if text.len() > 1 && text[0] == b'"' && text[text.len() - 1] == b'"' {
                    text = &text[1..text.len() - 1];
                }
                Some(Tok::Raw(self.value(b's', text)))
            }
            2 | 4 => {
                self.begin(State::Initial);
                self.line += 1;
                Some(Tok::Eol)
            }
            3 => None,
            _ => {
                self.begin(State::Initial);
                Some(Tok::Eol)
            }
        })
    }

    /// `"]"{TABS_AND_SPACES}*{NEWLINE}?`.
    fn section_end(&self, p: usize) -> usize {
        if self.at(p) != b']' {
            return 0;
        }
        let b = self.blanks(p + 1);
        1 + b + self.newline(p + 1 + b)
    }

    fn section_raw(&mut self, p: usize) -> Result<Option<Tok>, Fill> {
        let (rule, n) = Self::pick(&[
            (1, Ok(self.section_end(p))),
            (2, self.run(p, |c| !b"]\n\r".contains(&c))),
            (3, Ok(1)),
        ])?;
        let text = &self.s[p..p + n];
        self.pos = p + n;
        Ok(Some(match rule {
            1 => {
                self.begin(State::Initial);
                self.line += 1;
                Tok::Char(b']')
            }
            2 => Tok::Raw(self.value(b's', text)),
            _ => Tok::End,
        }))
    }

    /// `ST_SECTION_VALUE` and `ST_OFFSET`, which differ only in how they
    /// end.
    fn section_value(&mut self, p: usize) -> Result<Option<Tok>, Fill> {
        let end = if self.state == State::Offset {
            self.blanks_then(p, b']')
        } else {
            self.section_end(p)
        };
        let (rule, n) = Self::pick(&[
            (1, self.single_quoted(p)),
            (2, Ok(end)),
            (3, Ok(if self.lit(p, b"${") { 2 } else { 0 })),
            (4, Ok(self.constant(p))),
            (5, Ok(self.number(p))),
            (6, self.section_value_chars(p)),
            (7, Ok(self.blanks_then(p, b'"'))),
            (8, Ok(self.blanks(p))),
            (9, Ok(1)),
        ])?;
        let text = &self.s[p..p + n];
        self.pos = p + n;
        Ok(Some(match rule {
            1 => Tok::Raw(self.value(b's', &text[1..n - 1])),
            2 => {
                if self.state == State::SectionValue {
                    self.line += 1;
                }
                self.begin(State::Initial);
                Tok::Char(b']')
            }
            3 => {
                self.push(State::VarName);
                Tok::DollarCurly
            }
            4 => Tok::Constant(self.value(b's', text)),
            5 => Tok::Number(self.value(b'#', text)),
            6 => Tok::Str(self.value(b's', text)),
            7 => {
                self.push(State::DoubleQuotes);
                Tok::Char(b'"')
            }
            8 => Tok::Whitespace(self.value(b's', text)),
            _ => Tok::End,
        }))
    }

    fn double_quotes(&mut self, p: usize) -> Result<Option<Tok>, Fill> {
        if self.lit(p, b"${") {
            self.pos = p + 2;
            self.push(State::VarName);
            return Ok(Some(Tok::DollarCurly));
        }
        if self.at(p) == b'"' {
            self.pos = p + 1 + self.blanks(p + 1);
            self.pop();
            return Ok(Some(Tok::Char(b'"')));
        }
        let len = self.s.len();
        let mut s = p;
        while s < len {
            let c = self.s[s];
            s += 1;
            match c {
                b'"' => {
                    s -= 1;
                    break;
                }
                b'$' if s < len && self.s[s] == b'{' => {
                    s -= 1;
                    break;
                }
                b'\\' if s < len => {
                    let escaped = self.s[s];
                    s += 1;
                    // `key="C:\path\"`: a backslash before the closing
                    // quote at a line end is a Windows path's.
                    if escaped == b'"' && (s >= len || self.s[s] == b'\n' || self.s[s] == b'\r') {
                        s -= 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        self.pos = s;
        let text = &self.s[p..s];
        Ok(Some(Tok::Quoted(V::S(self.unescape(text)))))
    }

    /// `zend_ini_escape_string`, counting the lines it passes.
    fn unescape(&mut self, text: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len());
        let mut i = 0;
        while i < text.len() {
            let c = text[i];
            if c == b'\\' {
                i += 1;
                match text.get(i) {
                    None => {
                        out.push(b'\\');
                        continue;
                    }
                    Some(&e @ (b'"' | b'\\' | b'$')) => out.push(e),
                    Some(&e) => out.extend_from_slice(&[b'\\', e]),
                }
            } else {
                out.push(c);
            }
            let c = text[i];
            if c == b'\n' || (c == b'\r' && text.get(i + 1) != Some(&b'\n')) {
                self.line += 1;
            }
            i += 1;
        }
        out
    }

    fn var_name(&mut self, p: usize) -> Result<Option<Tok>, Fill> {
        let label = self.run(p, is_label)?;
        if label > 0 {
            self.pos = p + label;
            let text = Self::trim_label(&self.s[p..p + label], b' ');
            return Ok(Some(Tok::VarName(self.value(b's', text))));
        }
        self.pos = p + 1;
        if self.at(p) == b'}' {
            self.pop();
            return Ok(Some(Tok::Char(b'}')));
        }
        Ok(Some(Tok::End))
    }
}

/// `convert_to_number`: a number token's int or float, if it is one
/// that does not overflow.
fn typed_number(text: &[u8]) -> Option<V> {
    let s = std::str::from_utf8(text).ok()?;
    if s.contains('.') {
        return s.parse::<f64>().ok().map(V::Float);
    }
    s.parse::<i64>().ok().map(V::Int)
}

/// The array `parse_ini_string` returns, built as ext/standard's
/// callbacks build it.
struct Builder {
    top: PhpArray,
    sections: bool,
    /// The section entries go to (with `$process_sections`), and its key
    /// in `top`, where it is stored when the next one starts.
    active: Option<(Key, PhpArray)>,
}

impl Builder {
    fn new(sections: bool) -> Self {
        Builder {
            top: PhpArray::new(),
            sections,
            active: None,
        }
    }

    fn target(&mut self) -> &mut PhpArray {
        match &mut self.active {
            Some((_, a)) => a,
            None => &mut self.top,
        }
    }

    fn flush(&mut self) {
        if let Some((k, a)) = self.active.take() {
            self.top.insert(k, Value::arr(a));
        }
    }

    fn section(&mut self, name: Vec<u8>) {
        if self.sections {
            self.flush();
            let key = Key::from_bytes(&name);
            // Its place in the order is where it starts.
            self.top.insert(key.clone(), Value::arr(PhpArray::new()));
            self.active = Some((key, PhpArray::new()));
        }
    }

    fn entry(&mut self, name: &[u8], v: V) {
        self.target().insert(Key::from_bytes(name), v.into_value());
    }

    /// `name[offset] = v`.
    fn pop_entry(&mut self, name: &[u8], offset: Vec<u8>, v: V) {
        let arr = self.target();
        let key = match minizts_core::numfmt::is_numeric_str(name) {
            Some(minizts_core::numfmt::Number::Int(_)) if !(name.len() > 1 && name[0] == b'0') => {
                Key::Int(strtoul(name))
            }
            _ => Key::Str(PhpStr::from(name)),
        };
        let (slot, _) = arr.entry(key);
        if !matches!(slot, Value::Arr(_)) {
            *slot = Value::arr(PhpArray::new());
        }
        let Some(inner) = slot.array_mut() else { return };
        if offset.is_empty() {
            // PHP ignores a full array here too.
            let _ = inner.push(v.into_value());
        } else {
            inner.insert(Key::from_bytes(&offset), v.into_value());
        }
    }

    fn finish(mut self) -> PhpArray {
        self.flush();
        self.top
    }
}

/// C's `strtoul(s, NULL, 0)` on a numeric string, as a key: a leading
/// zero makes it octal, a minus negates.
fn strtoul(s: &[u8]) -> i64 {
    let mut i = s.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(s.len());
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let base = if s.get(i) == Some(&b'0') { 8 } else { 10 };
    let mut n: u64 = 0;
    for &c in &s[i..] {
        let d = match c {
            b'0'..=b'9' if u64::from(c - b'0') < base => u64::from(c - b'0'),
            _ => break,
        };
        n = n.checked_mul(base).and_then(|n| n.checked_add(d)).unwrap_or(u64::MAX);
    }
    (if neg { n.wrapping_neg() } else { n }) as i64
}

struct Parser<'a, G> {
    g: G,
    lx: Scanner<'a>,
    out: Builder,
}

type PResult<T> = Result<T, String>;

/// The tokens a value list (`var_string_list`) starts with.
fn starts_list(t: &Tok) -> bool {
    matches!(
        t,
        Tok::DollarCurly | Tok::Constant(_) | Tok::Raw(_) | Tok::Number(_) | Tok::Str(_) | Tok::Whitespace(_)
    ) || t.is_char(b'"')
}

fn starts_expr(t: &Tok) -> bool {
    starts_list(t) || t.is_char(b'~') || t.is_char(b'!') || t.is_char(b'(')
}

/// Bison's message for `got` where the state shifts `expected`.
fn syntax_error(got: &Tok, expected: &[Tok]) -> String {
    let mut msg = format!("syntax error, unexpected {}", got.name());
    if !expected.is_empty() && expected.len() <= 4 {
        let mut names: Vec<(usize, String)> = expected.iter().map(|t| (t.symbol(), t.name())).collect();
        names.sort();
        let names: Vec<String> = names.into_iter().map(|(_, n)| n).collect();
        msg.push_str(", expecting ");
        msg.push_str(&names.join(" or "));
    }
    msg
}

/// A state whose tokens are too many for bison to list.
const MANY: &[Tok] = &[Tok::End, Tok::End, Tok::End, Tok::End, Tok::End];

impl<G: Globals> Parser<'_, G> {
    fn statements(&mut self) -> PResult<()> {
        let mut tok = self.lx.next();
        loop {
            tok = match tok {
                Tok::End => return Ok(()),
                Tok::Eol => self.lx.next(),
                Tok::Section => {
                    let t = self.lx.next();
                    let (name, t) = if starts_list(&t) {
                        self.list(t, false)?
                    } else {
                        (V::S(Vec::new()), t)
                    };
                    if !t.is_char(b']') {
                        return Err(syntax_error(&t, &[Tok::Char(b']')]));
                    }
                    let name = self.string(name);
                    self.out.section(name);
                    self.lx.next()
                }
                Tok::Label(name) => {
                    let t = self.lx.next();
                    if !t.is_char(b'=') {
                        // A bare name: nothing to store.
                        t
                    } else {
                        let (v, t) = self.string_or_value()?;
                        self.out.entry(&self.bytes(name), v);
                        t
                    }
                }
                Tok::Offset(name) => {
                    let t = self.lx.next();
                    let (offset, t) = if starts_list(&t) {
                        self.list(t, true)?
                    } else {
                        (V::S(Vec::new()), t)
                    };
                    if !t.is_char(b']') {
                        return Err(syntax_error(&t, &[Tok::Char(b']')]));
                    }
                    let t = self.lx.next();
                    if !t.is_char(b'=') {
                        return Err(syntax_error(&t, &[Tok::Char(b'=')]));
                    }
                    let (v, t) = self.string_or_value()?;
                    let offset = self.string(offset);
                    self.out.pop_entry(&self.bytes(name), offset, v);
                    t
                }
                other => return Err(syntax_error(&other, MANY)),
            };
        }
    }

    fn bytes(&self, v: V) -> Vec<u8> {
        match v {
            V::S(s) => s,
            other => self.string(other),
        }
    }

    /// A value as a string (`zend_ini_add_string`'s conversion).
    fn string(&self, v: V) -> Vec<u8> {
        match v {
            V::S(s) => s,
            V::Bool(true) => b"1".to_vec(),
            V::Bool(false) | V::Null => Vec::new(),
            V::Int(n) => n.to_string().into_bytes(),
            V::Float(f) => crate::ops::to_str(self.g, &Value::Float(f))
                .map(|s| s.to_vec())
                .unwrap_or_default(),
        }
    }

    fn concat(&self, a: V, b: V) -> V {
        let mut a = self.string(a);
        a.extend_from_slice(&self.string(b));
        V::S(a)
    }

    /// `string_or_value`, and the token after it.
    fn string_or_value(&mut self) -> PResult<(V, Tok)> {
        let t = self.lx.next();
        match t {
            Tok::True(v) | Tok::False(v) | Tok::Null(v) => Ok((v, self.lx.next())),
            Tok::Eol => Ok((V::S(Vec::new()), self.lx.next())),
            t if starts_expr(&t) => self.expr(t),
            t => Err(syntax_error(&t, MANY)),
        }
    }

    /// `expr`: left-associative `|`, `&`, `^` of equal precedence over
    /// unary `~`, `!` and parentheses.
    fn expr(&mut self, t: Tok) -> PResult<(V, Tok)> {
        let (mut v, mut t) = self.unary(t)?;
        while let Tok::Char(op @ (b'|' | b'&' | b'^')) = t {
            let next = self.lx.next();
            let (rhs, after) = self.unary(next)?;
            v = V::S(do_op(op, int_val(&v), int_val(&rhs)));
            t = after;
        }
        Ok((v, t))
    }

    fn unary(&mut self, t: Tok) -> PResult<(V, Tok)> {
        match t {
            Tok::Char(op @ (b'~' | b'!')) => {
                let next = self.lx.next();
                let (v, t) = self.unary(next)?;
                Ok((V::S(do_op(op, int_val(&v), 0)), t))
            }
            Tok::Char(b'(') => {
                let next = self.lx.next();
                let (v, t) = self.expr(next)?;
                if !t.is_char(b')') {
                    let expected = [Tok::Char(b'^'), Tok::Char(b'|'), Tok::Char(b'&'), Tok::Char(b')')];
                    return Err(syntax_error(&t, &expected));
                }
                Ok((v, self.lx.next()))
            }
            t if starts_list(&t) => self.list(t, true),
            t => Err(syntax_error(&t, MANY)),
        }
    }

    /// `var_string_list` (constants replaced by their values) or
    /// `var_string_list_section` (kept as written), and the token after.
    fn list(&mut self, mut t: Tok, constants: bool) -> PResult<(V, Tok)> {
        let mut acc: Option<V> = None;
        loop {
            let part = match t {
                Tok::DollarCurly => self.var_ref()?,
                Tok::Constant(V::S(name)) if constants => self.constant(name),
                Tok::Constant(v) | Tok::Raw(v) | Tok::Number(v) | Tok::Str(v) | Tok::Whitespace(v) => v,
                Tok::Char(b'"') => self.encapsed()?,
                other => return Ok((acc.unwrap_or(V::S(Vec::new())), other)),
            };
            acc = Some(match acc {
                None => part,
                Some(a) => self.concat(a, part),
            });
            t = self.lx.next();
        }
    }

    /// The inside of `"…"`, after the opening quote.
    fn encapsed(&mut self) -> PResult<V> {
        let mut acc = Vec::new();
        loop {
            match self.lx.next() {
                Tok::DollarCurly => {
                    let v = self.var_ref()?;
                    acc.extend_from_slice(&self.string(v));
                }
                Tok::Quoted(v) => acc.extend_from_slice(&self.string(v)),
                Tok::Char(b'"') => return Ok(V::S(acc)),
                t => {
                    let expected = [Tok::DollarCurly, Tok::Quoted(V::Null), Tok::Char(b'"')];
                    return Err(syntax_error(&t, &expected));
                }
            }
        }
    }

    /// `${name}`, after the `${`: the environment variable (minizts has
    /// no php.ini directives to look in first).
    fn var_ref(&mut self) -> PResult<V> {
        let name = match self.lx.next() {
            Tok::VarName(v) => self.string(v),
            t => return Err(syntax_error(&t, &[Tok::VarName(V::Null)])),
        };
        let t = self.lx.next();
        if !t.is_char(b'}') {
            return Err(syntax_error(&t, &[Tok::Char(b'}')]));
        }
        let value = std::str::from_utf8(&name)
            .ok()
            .filter(|n| !n.is_empty() && !n.contains('='))
            .and_then(std::env::var_os)
            .map(|v| {
                use std::os::unix::ffi::OsStrExt;
                v.as_bytes().to_vec()
            });
        Ok(V::S(value.unwrap_or_default()))
    }

    /// `zend_ini_get_constant`: a defined constant's value as a string,
    /// else the name itself.
    fn constant(&self, name: Vec<u8>) -> V {
        let special = match name.to_ascii_lowercase().as_slice() {
            b"true" => Some(Value::Bool(true)),
            b"false" => Some(Value::Bool(false)),
            b"null" => Some(Value::Null),
            _ => None,
        };
        let g = self.g;
        let found = eg!(g)
            .constants
            .get(name.as_slice())
            .cloned()
            .or_else(|| cg!(g).constant_table.get(name.as_slice()).cloned())
            .or(special);
        match found {
            Some(v) => V::S(crate::ops::to_str(g, &v).map(|s| s.to_vec()).unwrap_or_default()),
            None => V::S(name),
        }
    }
}

/// `get_int_val`: an operand as the C `int` the operators work on.
fn int_val(v: &V) -> i32 {
    match v {
        V::Int(n) => *n as i32,
        V::Float(f) => {
            if f.is_finite() && *f > f64::from(i32::MIN) - 1.0 && *f < f64::from(i32::MAX) + 1.0 {
                *f as i32
            } else {
                i32::MIN
            }
        }
        V::S(s) => atoi(s),
        V::Bool(b) => i32::from(*b),
        V::Null => 0,
    }
}

/// C's `atoi` (glibc's: `strtol`, saturating, then cut to `int`).
fn atoi(s: &[u8]) -> i32 {
    let mut i = s
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t'..=b'\r'))
        .unwrap_or(s.len());
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut n: i64 = 0;
    for &c in &s[i..] {
        if !c.is_ascii_digit() {
            break;
        }
        n = n.saturating_mul(10).saturating_add(i64::from(c - b'0'));
    }
    let n = if neg { n.saturating_neg() } else { n };
    n as i32
}

/// `zend_ini_do_op`: the result as the string `sprintf("%d")` gives.
fn do_op(op: u8, a: i32, b: i32) -> Vec<u8> {
    let r = match op {
        b'|' => a | b,
        b'&' => a & b,
        b'^' => a ^ b,
        b'~' => !a,
        b'!' => i32::from(a == 0),
        _ => 0,
    };
    r.to_string().into_bytes()
}
