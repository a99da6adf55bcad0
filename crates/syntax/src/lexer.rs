//! The lexer: PHP source bytes to tokens.
//!
//! The token rules are a [logos] state machine ([`Token`]); [`Lexer`] wraps it
//! with what a regular lexer cannot do alone: PHP's two modes (text outside
//! `<?php … ?>` or `<? … ?>` is inline HTML, text inside is code), `?>`
//! acting as `;`, `<?=` meaning `echo`, and `elseif` arriving as `else if`
//! so the grammar needs one `if` rule only. A double-quoted string is
//! followed through its interpolated code the way PHP's lexer follows it
//! (`scan_string`), since that code may hold strings of its own. Tokens
//! carry their source text so that parse errors can quote it the way PHP
//! does (see the `Display` impl).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use logos::Logos;

use crate::ast::CastType;

mod alt_syntax;

pub use alt_syntax::AltSyntax;

/// One token. Keywords are case-insensitive, as in PHP.
#[derive(Logos, Debug, Clone, Copy, PartialEq)]
#[logos(utf8 = false)]
// PHP's whitespace is these four bytes only: a form feed is a bad character.
#[logos(skip br"[ \t\r\n]+")]
#[logos(error(LexError, LexError::from_lexer))]
#[logos(extras = Extras)]
pub enum Token<'s> {
    // Keywords.
    #[token("echo", ignore(case))]
    Echo,
    #[token("print", ignore(case))]
    Print,
    #[token("if", ignore(case))]
    If,
    #[token("else", ignore(case))]
    Else,
    /// Never produced by [`Lexer`], which splits it into `else` `if`.
    #[token("elseif", ignore(case))]
    ElseIf,
    #[token("while", ignore(case))]
    While,
    #[token("do", ignore(case))]
    Do,
    #[token("for", ignore(case))]
    For,
    #[token("foreach", ignore(case))]
    Foreach,
    #[token("as", ignore(case))]
    As,
    #[token("switch", ignore(case))]
    Switch,
    #[token("case", ignore(case))]
    Case,
    #[token("default", ignore(case))]
    Default,
    #[token("break", ignore(case))]
    Break,
    #[token("continue", ignore(case))]
    Continue,
    #[token("return", ignore(case))]
    Return,
    #[token("function", ignore(case))]
    Function,
    #[token("fn", ignore(case))]
    Fn,
    #[token("use", ignore(case))]
    Use,
    #[token("global", ignore(case))]
    Global,
    #[token("static", ignore(case))]
    Static,
    #[token("unset", ignore(case))]
    Unset,
    #[token("isset", ignore(case))]
    Isset,
    #[token("empty", ignore(case))]
    Empty,
    #[token("eval", ignore(case))]
    Eval,
    #[token("include", ignore(case))]
    Include,
    #[token("include_once", ignore(case))]
    IncludeOnce,
    #[token("require", ignore(case))]
    Require,
    #[token("require_once", ignore(case))]
    RequireOnce,
    #[token("exit", ignore(case))]
    Exit,
    #[token("die", ignore(case))]
    Die,
    #[token("const", ignore(case))]
    Const,
    #[token("array", ignore(case))]
    Array,
    #[token("list", ignore(case))]
    List,
    #[token("and", ignore(case))]
    LogicalAnd,
    #[token("or", ignore(case))]
    LogicalOr,
    #[token("xor", ignore(case))]
    LogicalXor,
    #[token("match", ignore(case))]
    Match,
    // The alternative syntax's block ends: `AltSyntax` turns them into `}`.
    #[token("endif", ignore(case))]
    EndIf,
    #[token("endwhile", ignore(case))]
    EndWhile,
    #[token("endfor", ignore(case))]
    EndFor,
    #[token("endforeach", ignore(case))]
    EndForeach,
    #[token("endswitch", ignore(case))]
    EndSwitch,
    #[token("declare", ignore(case))]
    Declare,
    #[token("enddeclare", ignore(case))]
    EndDeclare,
    #[token("goto", ignore(case))]
    Goto,
    /// `__halt_compiler`: the lexer ends the script after its `();`.
    #[token("__halt_compiler", ignore(case))]
    HaltCompiler,
    #[token("class", ignore(case))]
    Class,
    #[token("interface", ignore(case))]
    Interface,
    #[token("trait", ignore(case))]
    Trait,
    #[token("extends", ignore(case))]
    Extends,
    #[token("implements", ignore(case))]
    Implements,
    #[token("new", ignore(case))]
    New,
    #[token("clone", ignore(case))]
    Clone,
    #[token("instanceof", ignore(case))]
    Instanceof,
    #[token("try", ignore(case))]
    Try,
    #[token("catch", ignore(case))]
    Catch,
    #[token("finally", ignore(case))]
    Finally,
    #[token("throw", ignore(case))]
    Throw,
    #[token("abstract", ignore(case))]
    Abstract,
    #[token("final", ignore(case))]
    Final,
    #[token("private", ignore(case))]
    Private,
    #[token("protected", ignore(case))]
    Protected,
    #[token("public", ignore(case))]
    Public,
    #[token("readonly", ignore(case))]
    Readonly,
    /// `enum` before a name (made by the iterator, which looks ahead;
    /// otherwise `enum` is an identifier).
    Enum,
    #[token("insteadof", ignore(case))]
    Insteadof,
    #[token("var", ignore(case))]
    Var,
    #[token("namespace", ignore(case))]
    Namespace,
    /// PHP keywords for features minizts leaves out (docs/language.md); the
    /// parser reports them as unsupported rather than as odd identifiers.
    #[regex(
        b"(?i:yield)",
        |lex| as_str(lex.slice())
    )]
    Unsupported(&'s str),

    // Punctuation and operators.
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("**")]
    Pow,
    #[token(".")]
    Dot,
    #[token("=")]
    Assign,
    #[token("+=")]
    PlusAssign,
    #[token("-=")]
    MinusAssign,
    #[token("*=")]
    StarAssign,
    #[token("/=")]
    SlashAssign,
    #[token(".=")]
    DotAssign,
    #[token("%=")]
    PercentAssign,
    #[token("**=")]
    PowAssign,
    #[token("??=")]
    CoalesceAssign,
    #[token("&=")]
    AmpAssign,
    #[token("|=")]
    PipeAssign,
    #[token("^=")]
    CaretAssign,
    #[token("<<=")]
    ShlAssign,
    #[token(">>=")]
    ShrAssign,
    #[token("==")]
    Eq,
    #[token("!=")]
    NotEq,
    #[token("<>")]
    NotEqAlt,
    #[token("===")]
    Identical,
    #[token("!==")]
    NotIdentical,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("<=>")]
    Spaceship,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("!")]
    Bang,
    /// `&` followed (after blanks) by a variable or `...`: PHP's
    /// `T_AMPERSAND_FOLLOWED_BY_VAR_OR_VARARG`, which is what tells a
    /// by-reference parameter from an intersection type.
    #[token("&")]
    Amp,
    /// Any other `&` (`A&B $x`, `function &f()`). Produced by [`Lexer`].
    AmpNotVar,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("~")]
    Tilde,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
    #[token("??")]
    Coalesce,
    #[token("?")]
    Question,
    #[token(":")]
    Colon,
    #[token(";")]
    Semicolon,
    #[token(",")]
    Comma,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("=>")]
    DoubleArrow,
    #[token("++")]
    Inc,
    #[token("--")]
    Dec,
    #[token("@")]
    At,
    #[token("...")]
    Ellipsis,
    #[token("->")]
    Arrow,
    #[token("?->")]
    NullsafeArrow,
    #[token("::")]
    DoubleColon,
    #[token("\\")]
    Backslash,
    #[token("$")]
    Dollar,
    /// `?>`, with the one newline that directly follows it.
    #[regex(br"\?>(\r?\n)?")]
    CloseTag,

    // Casts: `(int)`, `( float )`, …
    #[regex(
        br"\([ \t]*(?i:int|integer|bool|boolean|float|double|real|string|binary|array|object|unset)[ \t]*\)",
        lex_cast
    )]
    Cast(CastType),

    // Literals and names. Names are bytes, as in PHP (a Latin-1 `$café`
    // is valid); the parser turns them into `str` with `crate::names`.
    #[regex(br"\$[a-zA-Z_\x80-\xff][a-zA-Z0-9_\x80-\xff]*", |lex| &lex.slice()[1..])]
    Variable(&'s [u8]),
    #[regex(br"[a-zA-Z_\x80-\xff][a-zA-Z0-9_\x80-\xff]*", |lex| lex.slice())]
    Ident(&'s [u8]),
    /// `a\b`: a namespaced name (PHP's `T_NAME_QUALIFIED`), one token.
    #[regex(br"[a-zA-Z_\x80-\xff][a-zA-Z0-9_\x80-\xff]*(\\[a-zA-Z_\x80-\xff][a-zA-Z0-9_\x80-\xff]*)+", |lex| lex.slice())]
    QualifiedName(&'s [u8]),
    /// `\a` or `\a\b` (PHP's `T_NAME_FULLY_QUALIFIED`); the payload keeps
    /// the leading backslash.
    #[regex(br"(\\[a-zA-Z_\x80-\xff][a-zA-Z0-9_\x80-\xff]*)+", |lex| lex.slice())]
    FullyQualifiedName(&'s [u8]),
    /// `namespace\a` (PHP's `T_NAME_RELATIVE`): made by the iterator from
    /// a qualified name whose first part is `namespace`, which is a
    /// keyword; the payload is the part after `namespace\`.
    RelativeName(&'s [u8]),
    #[regex(br"[0-9]+(_[0-9]+)*", |lex| as_str(lex.slice()))]
    #[regex(br"0[xX][0-9a-fA-F]+(_[0-9a-fA-F]+)*", |lex| as_str(lex.slice()))]
    #[regex(br"0[bB][01]+(_[01]+)*", |lex| as_str(lex.slice()))]
    #[regex(br"0[oO][0-7]+(_[0-7]+)*", |lex| as_str(lex.slice()))]
    Int(&'s str),
    #[regex(br"([0-9]+(_[0-9]+)*)?\.[0-9]+(_[0-9]+)*([eE][+-]?[0-9]+(_[0-9]+)*)?", |lex| as_str(lex.slice()))]
    #[regex(br"[0-9]+(_[0-9]+)*\.([eE][+-]?[0-9]+(_[0-9]+)*)?", |lex| as_str(lex.slice()))]
    #[regex(br"[0-9]+(_[0-9]+)*[eE][+-]?[0-9]+(_[0-9]+)*", |lex| as_str(lex.slice()))]
    Float(&'s str),
    /// A single-quoted string; the payload is the text between the quotes,
    /// escapes not yet resolved.
    #[regex(br"'([^'\\]|\\(.|\n))*'", |lex| { let s = lex.slice(); &s[1..s.len() - 1] })]
    // `b'…'`: PHP 6's binary-string prefix, still accepted and ignored.
    #[regex(br"[bB]'([^'\\]|\\(.|\n))*'", |lex| { let s = lex.slice(); &s[2..s.len() - 1] })]
    SingleQuoted(&'s [u8]),
    /// A double-quoted string; the payload is the text between the quotes.
    /// The parser resolves escapes and interpolation. Its `{$…}` parts are
    /// code and may hold quotes of their own (`"{$a["k"]}"`), so the end
    /// is found by following PHP's lexer (`scan_string`), not by a regular
    /// expression.
    #[token(b"\"", lex_double_quoted)]
    #[token(b"b\"", lex_double_quoted)]
    #[token(b"B\"", lex_double_quoted)]
    DoubleQuoted(&'s [u8]),
    /// A heredoc or nowdoc, from `<<<` to its closing marker.
    #[token(b"<<<", lex_heredoc)]
    Heredoc(Heredoc<'s>),

    /// `#[`, which opens an attribute group (not a comment since PHP 8).
    #[token("#[")]
    AttributeStart,
    // Comments are skipped; `//` and `#` comments end at a newline or `?>`.
    #[regex(br"//|#", line_comment)]
    #[regex(br"/\*([^*]|\*+[^*/])*\*+/", logos::skip)]
    Comment,
    /// A `/*` comment that runs to the end of the file.
    #[regex(br"/\*([^*]|\*+[^*/])*\**")]
    UnterminatedComment,

    /// Text outside `<?php … ?>`. Produced by [`Lexer`], never by logos.
    InlineHtml(&'s [u8]),
    /// A byte that starts no token (PHP's `T_BAD_CHARACTER`). Produced by
    /// [`Lexer`]; no grammar rule accepts it, so the parser reports it with
    /// what it expected instead, as PHP does.
    BadChar(u8),
}

/// A heredoc (`<<<ID`, `<<<"ID"`) or nowdoc (`<<<'ID'`) as the lexer
/// found it: the body still holds the closing marker's indentation, which
/// the parser removes from each line (PHP 7.3's flexible heredoc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Heredoc<'s> {
    /// The lines between the opening line and the closing marker's line,
    /// without the newline that ends the last of them.
    pub body: &'s [u8],
    /// Where the body starts, counted from the start of the token.
    pub body_offset: u32,
    /// The whitespace before the closing marker.
    pub indent: &'s [u8],
    /// `<<<'ID'`: no escapes, no interpolation.
    pub nowdoc: bool,
    /// The opening line up to its newline, for messages.
    pub header: &'s [u8],
}

/// A token the lexer could not read.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum LexError {
    /// A byte that starts no token.
    UnexpectedChar(u8),
    /// A string or comment that runs to the end of the file.
    #[default]
    UnexpectedEof,
    /// `/*` without `*/`; the payload is the line it starts on.
    UnterminatedComment(u32),
    /// A `'` string without its closing quote; the payload is the text
    /// after the quote, up to the end of its line.
    UnterminatedString(String),
    /// An opening bracket never closed: the bracket and its line (`None`
    /// when that is the line of the end of the file, which PHP then does
    /// not repeat).
    Unclosed(u8, Option<u32>),
    /// A double-quoted string that runs to the end of the file.
    UnclosedString(OpenString),
    /// The end of the file where PHP's parser expects these tokens.
    UnexpectedEofExpecting(&'static str),
    /// A closing bracket with nothing open.
    Unmatched(u8),
    /// `<<<` not followed by a heredoc label and a newline.
    BadHeredoc,
    /// A heredoc or nowdoc whose closing marker never comes (`empty`:
    /// nothing follows its opening line).
    UnterminatedHeredoc { empty: bool },
    /// A heredoc body line (starting at `at` in the lexer's source) less
    /// indented than the closing marker.
    BodyIndentation { at: usize, level: usize },
    /// A heredoc body that starts with an interpolation, less indented
    /// than the closing marker (PHP reports it with no file or line).
    BodyIndentationUnlocated { level: usize },
    /// Tabs and spaces mixed in a heredoc's indentation, on the line at
    /// `at` in the lexer's source.
    MixedIndentation { at: usize },
    /// A closing bracket that does not match the open one (which opened on
    /// the given line, `None` when it is the closing one's).
    Mismatched(u8, Option<u32>, u8),
    /// `(real)`, removed in PHP 8.
    RealCast,
}

impl LexError {
    fn from_lexer<'s>(lex: &mut logos::Lexer<'s, Token<'s>>) -> LexError {
        match lex.slice().first() {
            Some(b'"' | b'\'') => LexError::UnexpectedEof,
            Some(b'/') => LexError::UnexpectedEof,
            Some(&c) => LexError::UnexpectedChar(c),
            None => LexError::UnexpectedEof,
        }
    }
}

impl fmt::Display for LexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LexError::UnexpectedChar(c) => write!(f, "syntax error, unexpected character 0x{c:02X}"),
            LexError::UnexpectedEof => write!(f, "syntax error, unexpected end of file"),
            LexError::UnterminatedComment(line) => write!(f, "Unterminated comment starting line {line}"),
            LexError::UnterminatedString(text) => write!(f, "syntax error, unexpected string content \"{text}\""),
            LexError::Unclosed(c, line) => write!(f, "Unclosed '{}'{}", *c as char, on_line(*line)),
            LexError::UnclosedString(_) => write!(f, "syntax error, unexpected end of file"),
            LexError::UnexpectedEofExpecting(what) => {
                write!(f, "syntax error, unexpected end of file, expecting {what}")
            }
            LexError::Unmatched(c) => write!(f, "Unmatched '{}'", *c as char),
            LexError::BadHeredoc => write!(f, "syntax error, unexpected token \"<<\""),
            LexError::UnterminatedHeredoc { empty: true } => write!(f, "syntax error, unexpected end of file"),
            LexError::UnterminatedHeredoc { empty: false } => write!(
                f,
                "syntax error, unexpected end of file, expecting variable or heredoc end or \"${{\" or \"{{$\""
            ),
            LexError::BodyIndentation { level, .. } | LexError::BodyIndentationUnlocated { level } => write!(
                f,
                "Invalid body indentation level (expecting an indentation level of at least {level})"
            ),
            LexError::MixedIndentation { .. } => write!(f, "Invalid indentation - tabs and spaces cannot be mixed"),
            LexError::RealCast => write!(f, "The (real) cast has been removed, use (float) instead"),
            LexError::Mismatched(open, line, close) => write!(
                f,
                "Unclosed '{}'{} does not match '{}'",
                *open as char,
                on_line(*line),
                *close as char
            ),
        }
    }
}

/// " on line N" when PHP names the line in a bracket message.
fn on_line(line: Option<u32>) -> String {
    line.map_or(String::new(), |line| format!(" on line {line}"))
}

/// The text of a token whose pattern matches ASCII only.
fn as_str(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// What the token callbacks know besides the bytes: where the bytes are in
/// the whole source, and the string ends found so far.
#[derive(Default, Clone)]
pub struct Extras {
    /// The offset of logos's source in the whole source.
    base: usize,
    ends: Rc<StringEnds>,
}

/// The ends of the double-quoted strings and interpolated parts found so
/// far, by where they start in the whole source. Finding the end of a
/// string means reading everything nested in it, and the parser reads
/// each nested string again when it parses the part around it; with the
/// ends kept, every byte is scanned once however deep strings nest.
#[derive(Default)]
pub struct StringEnds(RefCell<HashMap<(usize, bool), usize>>);

impl StringEnds {
    fn get(&self, start: usize, code: bool) -> Option<usize> {
        self.0.borrow().get(&(start, code)).copied()
    }

    fn insert(&self, start: usize, code: bool, end: usize) {
        self.0.borrow_mut().insert((start, code), end);
    }
}

/// Reads a double-quoted string whose opening quote logos has matched.
fn lex_double_quoted<'s>(lex: &mut logos::Lexer<'s, Token<'s>>) -> Result<&'s [u8], LexError> {
    let src = lex.source();
    // The opening quote (after a `b` prefix, if any).
    let start = lex.span().end - 1;
    let scanned = lex.span().end;
    let (base, ends) = (lex.extras.base, lex.extras.ends.clone());
    match scan_string(src, base, start + 1, Part::String, &ends, 0) {
        Ok(end) => {
            lex.bump(end - scanned);
            Ok(&src[start + 1..end - 1])
        }
        Err(open) => {
            lex.bump(src.len() - scanned);
            Err(LexError::UnclosedString(open))
        }
    }
}

fn is_label_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_label_char(c: u8) -> bool {
    is_label_start(c) || c.is_ascii_digit()
}

/// Reads a heredoc or nowdoc whose `<<<` logos has matched: the label
/// line, then the body up to the first line that holds, after optional
/// spaces or tabs, the label not followed by a label character (PHP 7.3's
/// rule, so the marker may be indented and followed by `;`, `,` or `)` on
/// its line). A heredoc's `{$…}` and `${…}` parts are code, where the
/// label ends nothing, and may hold strings and heredocs of their own.
/// The body's indentation is checked here, as PHP's lexer checks it.
fn lex_heredoc<'s>(lex: &mut logos::Lexer<'s, Token<'s>>) -> Result<Heredoc<'s>, LexError> {
    let src = lex.source();
    let start = lex.span().start;
    let (base, ends) = (lex.extras.base, lex.extras.ends.clone());
    let Some(head) = heredoc_head(src, lex.span().end) else {
        return Err(LexError::BadHeredoc);
    };
    let header = src[start..head.body].trim_ascii_end();
    let found = match scan_heredoc(src, base, &head, &ends, 0) {
        Ok(found) => found,
        Err(_) => {
            let empty = head.body >= src.len();
            lex.bump(src.len() - lex.span().end);
            return Err(LexError::UnterminatedHeredoc { empty });
        }
    };
    let indent = &src[found.line..found.marker];
    check_heredoc_indentation(src, &head, &found, indent)?;
    // The body ends before the newline that ends its last line.
    let mut body_end = found.line;
    if body_end > head.body && src[body_end - 1] == b'\n' {
        body_end -= 1;
    }
    if body_end > head.body && src[body_end - 1] == b'\r' {
        body_end -= 1;
    }
    lex.bump(found.end - lex.span().end);
    Ok(Heredoc {
        body: &src[head.body..body_end.max(head.body)],
        body_offset: (head.body - start) as u32,
        indent,
        nowdoc: head.nowdoc,
        header,
    })
}

/// The opening line of a heredoc: its label, its kind and where its body
/// starts.
struct HeredocHead<'s> {
    label: &'s [u8],
    nowdoc: bool,
    body: usize,
}

/// The opening line of a heredoc whose `<<<` ends at `i`, if it is one.
fn heredoc_head(src: &[u8], mut i: usize) -> Option<HeredocHead<'_>> {
    while matches!(src.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let quote = match src.get(i) {
        Some(&q @ (b'"' | b'\'')) => {
            i += 1;
            Some(q)
        }
        _ => None,
    };
    let label_start = i;
    if !src.get(i).is_some_and(|&c| is_label_start(c)) {
        return None;
    }
    while src.get(i).is_some_and(|&c| is_label_char(c)) {
        i += 1;
    }
    let label = &src[label_start..i];
    if let Some(q) = quote {
        if src.get(i) != Some(&q) {
            return None;
        }
        i += 1;
    }
    match src.get(i) {
        Some(b'\n') => i += 1,
        Some(b'\r') => i += if src.get(i + 1) == Some(&b'\n') { 2 } else { 1 },
        _ => return None,
    }
    Some(HeredocHead {
        label,
        nowdoc: quote == Some(b'\''),
        body: i,
    })
}

/// Where a heredoc's closing marker is: the start of its line, the end of
/// its indentation and the end of the label; and where its body's text
/// lines start (not those inside interpolated code).
struct HeredocEnd {
    line: usize,
    marker: usize,
    end: usize,
    line_starts: Vec<usize>,
}

/// How deeply heredocs may nest inside one another's interpolated code;
/// each level is a recursion of the scanners.
const MAX_HEREDOC_NESTING: usize = 256;

/// Follows a heredoc's body from its start to its closing marker; `src`
/// starts at offset `base` of the whole source (see [`scan_string`]).
fn scan_heredoc(
    src: &[u8],
    base: usize,
    head: &HeredocHead<'_>,
    ends: &StringEnds,
    nesting: usize,
) -> Result<HeredocEnd, OpenString> {
    if nesting > MAX_HEREDOC_NESTING {
        return Err(OpenString::Text);
    }
    let mut i = head.body;
    let mut line_starts = vec![i];
    let mut at_line_start = true;
    loop {
        if at_line_start {
            at_line_start = false;
            let j = i + src[i..].iter().take_while(|&&c| c == b' ' || c == b'\t').count();
            if src[j..].starts_with(head.label) && !src.get(j + head.label.len()).is_some_and(|&c| is_label_char(c)) {
                line_starts.pop();
                return Ok(HeredocEnd {
                    line: i,
                    marker: j,
                    end: j + head.label.len(),
                    line_starts,
                });
            }
        }
        let Some(&c) = src.get(i) else {
            return Err(OpenString::Text);
        };
        let code = |at: usize| scan_string(src, base, at, Part::Code { depth: 1 }, ends, nesting);
        match c {
            b'\n' | b'\r' => {
                i += if c == b'\r' && src.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                at_line_start = true;
                line_starts.push(i);
            }
            // An escape never takes the newline after it.
            b'\\' if !head.nowdoc => {
                i += 1;
                if src.get(i).is_some_and(|&c| c != b'\n' && c != b'\r') {
                    i += 1;
                }
            }
            b'$' if !head.nowdoc && src.get(i + 1) == Some(&b'{') => i = code(i + 2)?,
            b'{' if !head.nowdoc && src.get(i + 1) == Some(&b'$') => i = code(i + 1)?,
            _ => i += 1,
        }
    }
}

/// PHP's checks of a heredoc's indentation (its lexer's, as it reads the
/// body's text): the closing marker's is all spaces or all tabs, and every
/// text line that is not blank starts with at least as much of it.
fn check_heredoc_indentation(
    src: &[u8],
    head: &HeredocHead<'_>,
    found: &HeredocEnd,
    indent: &[u8],
) -> Result<(), LexError> {
    let Some(&kind) = indent.first() else {
        return Ok(());
    };
    if indent.iter().any(|&c| c != kind) {
        return Err(LexError::MixedIndentation { at: head.body });
    }
    let level = indent.len();
    // A body that starts with an interpolation is noticed while PHP looks
    // ahead for the marker, where it has no file or line to report.
    if !head.nowdoc && starts_interpolation(&src[head.body..]) {
        return Err(LexError::BodyIndentationUnlocated { level });
    }
    for &at in &found.line_starts {
        for k in 0..level {
            match src.get(at + k) {
                None | Some(b'\n' | b'\r') => break,
                Some(&c @ (b' ' | b'\t')) if c != kind => return Err(LexError::MixedIndentation { at }),
                Some(b' ' | b'\t') => {}
                Some(_) => return Err(LexError::BodyIndentation { at, level }),
            }
        }
    }
    Ok(())
}

/// Whether `text` starts with an interpolation (`$name`, `${`, `{$`).
fn starts_interpolation(text: &[u8]) -> bool {
    match text {
        [b'$', b'{', ..] | [b'{', b'$', ..] => true,
        [b'$', c, ..] => is_label_start(*c),
        _ => false,
    }
}

/// The index of the `}` that closes the interpolated code starting at
/// `start` in the whole source `src`, just after the `{` of a `{$` or `${`
/// inside a string. `ends` is the cache the lexer of `src` uses.
pub fn interpolation_end(src: &[u8], start: usize, ends: &StringEnds) -> Option<usize> {
    scan_string(src, 0, start, Part::Code { depth: 1 }, ends, 0)
        .ok()
        .map(|end| end - 1)
}

/// What [`scan_string`] is inside of.
#[derive(Clone, Copy)]
enum Part {
    /// Double-quoted text.
    String,
    /// Interpolated code, `depth` braces deep.
    Code { depth: u32 },
}

/// How a double-quoted string that runs to the end of the file ends it,
/// as PHP reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OpenString {
    /// Inside interpolated code, with this bracket (and its offset in the
    /// lexer's source) the innermost one still open.
    Bracket(u8, usize),
    /// In text that holds no interpolation: PHP's parser still expects
    /// one of these.
    Expecting(&'static str),
    /// In text after an interpolation.
    Text,
    /// In a `/*` comment inside interpolated code, starting at this offset.
    Comment(usize),
}

/// Follows PHP's lexer through a double-quoted string from `i`: text, with
/// `{$…}` and `${…}` parts that are code up to their matching brace, and
/// code that may hold strings, comments and brackets of its own. Returns
/// the index just after the part it started in ends. `src` starts at
/// offset `base` of the whole source, which is what `ends` is keyed by.
/// An explicit stack, not recursion, so that deeply nested strings cannot
/// overflow the native stack; a heredoc in code is followed by
/// [`scan_heredoc`], `nesting` heredocs deep.
fn scan_string(
    src: &[u8],
    base: usize,
    mut i: usize,
    first: Part,
    ends: &StringEnds,
    nesting: usize,
) -> Result<usize, OpenString> {
    let is_code = |part: Part| matches!(part, Part::Code { .. });
    if let Some(end) = ends.get(base + i, is_code(first)) {
        return Ok(end - base);
    }
    let text_start = i;
    // Each part with where it starts.
    let mut stack = vec![(first, i)];
    // Brackets open in the code parts, innermost last.
    let mut brackets: Vec<(u8, usize)> = Vec::new();
    if let Part::Code { .. } = first {
        brackets.push((b'{', i.saturating_sub(1)));
    }
    let mut interpolated = false;
    let open = |brackets: &Vec<(u8, usize)>, interpolated: bool, i: usize| match brackets.last() {
        Some(&(c, at)) => OpenString::Bracket(c, at),
        None if interpolated => OpenString::Text,
        None if i == text_start => OpenString::Expecting("variable or string content or \"${\" or \"{$\""),
        None => OpenString::Expecting("variable or \"${\" or \"{$\""),
    };
    while let Some(&(part, part_start)) = stack.last() {
        let Some(&c) = src.get(i) else {
            return Err(open(&brackets, interpolated, i));
        };
        let top = stack.len() - 1;
        // A nested part: skipped if its end is known, else followed.
        let mut enter = |part: Part, at: usize, bracket: Option<usize>| match ends.get(base + at, is_code(part)) {
            Some(end) => end - base,
            None => {
                stack.push((part, at));
                brackets.extend(bracket.map(|b| (b'{', b)));
                at
            }
        };
        match part {
            Part::String => match c {
                b'\\' => i += 2,
                b'"' => {
                    stack.pop();
                    i += 1;
                    ends.insert(base + part_start, false, base + i);
                }
                b'{' if src.get(i + 1) == Some(&b'$') => {
                    interpolated = true;
                    i = enter(Part::Code { depth: 1 }, i + 1, Some(i));
                }
                b'$' if src.get(i + 1) == Some(&b'{') => {
                    interpolated = true;
                    i = enter(Part::Code { depth: 1 }, i + 2, Some(i + 1));
                }
                b'$' if src
                    .get(i + 1)
                    .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_' || c >= 0x80) =>
                {
                    interpolated = true;
                    i += 1;
                }
                _ => i += 1,
            },
            Part::Code { depth } => match c {
                b'{' => {
                    stack[top].0 = Part::Code { depth: depth + 1 };
                    brackets.push((b'{', i));
                    i += 1;
                }
                b'}' => {
                    brackets.pop();
                    i += 1;
                    if depth == 1 {
                        stack.pop();
                        ends.insert(base + part_start, true, base + i);
                    } else {
                        stack[top].0 = Part::Code { depth: depth - 1 };
                    }
                }
                b'[' | b'(' => {
                    brackets.push((c, i));
                    i += 1;
                }
                b']' | b')' => {
                    brackets.pop();
                    i += 1;
                }
                b'"' => i = enter(Part::String, i + 1, None),
                b'\'' => {
                    i += 1;
                    loop {
                        match src.get(i) {
                            None => return Err(open(&brackets, interpolated, i)),
                            Some(b'\\') => i += 2,
                            Some(b'\'') => break,
                            Some(_) => i += 1,
                        }
                    }
                    i += 1;
                }
                b'/' if src.get(i + 1) == Some(&b'*') => match src[i + 2..].windows(2).position(|w| w == b"*/") {
                    Some(close) => i += 2 + close + 2,
                    None => return Err(OpenString::Comment(i)),
                },
                b'/' if src.get(i + 1) == Some(&b'/') => i = line_comment_end(src, i),
                b'#' => i = line_comment_end(src, i),
                b'<' if src[i..].starts_with(b"<<<") => match heredoc_head(src, i + 3) {
                    Some(head) => i = scan_heredoc(src, base, &head, ends, nesting + 1)?.end,
                    None => i += 3,
                },
                _ => i += 1,
            },
        }
    }
    Ok(i)
}

/// Where a `//` or `#` comment starting at `i` stops: at a newline or `?>`.
fn line_comment_end(src: &[u8], mut i: usize) -> usize {
    while i < src.len() {
        match src[i] {
            b'\n' | b'\r' => break,
            b'?' if src.get(i + 1) == Some(&b'>') => break,
            _ => i += 1,
        }
    }
    i
}

fn lex_cast<'s>(lex: &mut logos::Lexer<'s, Token<'s>>) -> Result<CastType, LexError> {
    let inner = lex.slice()[1..lex.slice().len() - 1].trim_ascii().to_ascii_lowercase();
    Ok(match inner.as_slice() {
        b"int" | b"integer" => CastType::Int,
        b"bool" | b"boolean" => CastType::Bool,
        b"float" | b"double" => CastType::Float,
        // PHP 8's lexer still knows it, to refuse it.
        b"real" => return Err(LexError::RealCast),
        b"string" | b"binary" => CastType::String,
        b"array" => CastType::Array,
        b"object" => CastType::Object,
        _ => CastType::Unset,
    })
}

/// Skips a `//` or `#` comment up to (not including) the newline or `?>`.
fn line_comment<'s>(lex: &mut logos::Lexer<'s, Token<'s>>) -> logos::Skip {
    let n = line_comment_end(lex.remainder(), 0);
    lex.bump(n);
    logos::Skip
}

impl fmt::Display for Token<'_> {
    /// How PHP names a token in "syntax error, unexpected …".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Token::*;
        let text = match self {
            Variable(name) => return write!(f, "variable \"${}\"", crate::names::from_bytes(name)),
            Ident(name) => return write!(f, "identifier \"{}\"", crate::names::from_bytes(name)),
            QualifiedName(name) => return write!(f, "namespaced name \"{}\"", crate::names::from_bytes(name)),
            FullyQualifiedName(name) => {
                return write!(f, "fully qualified name \"{}\"", crate::names::from_bytes(name))
            }
            RelativeName(name) => {
                return write!(
                    f,
                    "namespace-relative name \"namespace\\{}\"",
                    crate::names::from_bytes(name)
                )
            }
            BadChar(c) => return write!(f, "character 0x{c:02X}"),
            Int(text) => return write!(f, "integer \"{text}\""),
            Float(text) => return write!(f, "floating-point number \"{text}\""),
            SingleQuoted(s) => return write!(f, "single-quoted string \"{}\"", String::from_utf8_lossy(s)),
            DoubleQuoted(s) => return write!(f, "double-quoted string \"{}\"", String::from_utf8_lossy(s)),
            Heredoc(h) => return write!(f, "heredoc start \"{}\"", String::from_utf8_lossy(h.header)),
            InlineHtml(_) => return write!(f, "inline html"),
            Unsupported(word) => return write!(f, "token \"{}\"", word.to_ascii_lowercase()),
            Cast(to) => {
                let name = match to {
                    CastType::Int => "(int)",
                    CastType::Float => "(double)",
                    CastType::String => "(string)",
                    CastType::Bool => "(bool)",
                    CastType::Array => "(array)",
                    CastType::Object => "(object)",
                    CastType::Unset => "(unset)",
                };
                return write!(f, "token \"{name}\"");
            }
            Echo => "echo",
            Print => "print",
            If => "if",
            Else => "else",
            ElseIf => "elseif",
            While => "while",
            Do => "do",
            For => "for",
            Foreach => "foreach",
            As => "as",
            Switch => "switch",
            Case => "case",
            Default => "default",
            Break => "break",
            Continue => "continue",
            Return => "return",
            Function => "function",
            Fn => "fn",
            Use => "use",
            Global => "global",
            Static => "static",
            Unset => "unset",
            Isset => "isset",
            Empty => "empty",
            Eval => "eval",
            Include => "include",
            IncludeOnce => "include_once",
            Require => "require",
            RequireOnce => "require_once",
            Exit => "exit",
            Die => "die",
            Const => "const",
            Array => "array",
            List => "list",
            LogicalAnd => "and",
            LogicalOr => "or",
            LogicalXor => "xor",
            Match => "match",
            Class => "class",
            Interface => "interface",
            Trait => "trait",
            Extends => "extends",
            Implements => "implements",
            New => "new",
            Clone => "clone",
            Instanceof => "instanceof",
            Try => "try",
            Catch => "catch",
            Finally => "finally",
            Throw => "throw",
            Abstract => "abstract",
            Final => "final",
            Private => "private",
            Protected => "protected",
            Public => "public",
            Readonly => "readonly",
            Enum => "enum",
            Insteadof => "insteadof",
            Var => "var",
            Namespace => "namespace",
            EndIf => "endif",
            EndWhile => "endwhile",
            EndFor => "endfor",
            EndForeach => "endforeach",
            EndSwitch => "endswitch",
            Declare => "declare",
            EndDeclare => "enddeclare",
            Goto => "goto",
            HaltCompiler => "__halt_compiler",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Pow => "**",
            Dot => ".",
            Assign => "=",
            PlusAssign => "+=",
            MinusAssign => "-=",
            StarAssign => "*=",
            SlashAssign => "/=",
            DotAssign => ".=",
            PercentAssign => "%=",
            PowAssign => "**=",
            CoalesceAssign => "??=",
            AmpAssign => "&=",
            PipeAssign => "|=",
            CaretAssign => "^=",
            ShlAssign => "<<=",
            ShrAssign => ">>=",
            Eq => "==",
            NotEq => "!=",
            NotEqAlt => "<>",
            Identical => "===",
            NotIdentical => "!==",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Spaceship => "<=>",
            AndAnd => "&&",
            OrOr => "||",
            Bang => "!",
            Amp | AmpNotVar => "&",
            Pipe => "|",
            Caret => "^",
            Tilde => "~",
            Shl => "<<",
            Shr => ">>",
            Coalesce => "??",
            Question => "?",
            Colon => ":",
            Semicolon => ";",
            Comma => ",",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            DoubleArrow => "=>",
            Inc => "++",
            Dec => "--",
            At => "@",
            Ellipsis => "...",
            Arrow => "->",
            NullsafeArrow => "?->",
            DoubleColon => "::",
            Backslash => "\\",
            Dollar => "$",
            CloseTag => "?>",
            AttributeStart => "#[",
            Comment | UnterminatedComment => "comment",
        };
        write!(f, "token \"{text}\"")
    }
}

/// What [`Lexer`] yields: a token with its start and end byte offsets, as
/// lalrpop's external-lexer interface wants.
pub type Spanned<'s> = Result<(usize, Token<'s>, usize), (usize, LexError)>;

enum Mode<'s> {
    /// Outside `<?php`: the next bytes are inline HTML.
    Html,
    /// Inside `<?php`: logos reads tokens from `src[base..]`.
    Code {
        inner: logos::Lexer<'s, Token<'s>>,
        base: usize,
    },
    Done,
}

/// The full PHP lexer (HTML mode, code mode, and the token rewrites).
pub struct Lexer<'s> {
    src: &'s [u8],
    /// Where HTML mode resumes.
    html_start: usize,
    mode: Mode<'s>,
    /// A token queued behind the one just returned (`elseif` → `else`, `if`).
    queued: Option<(usize, Token<'s>, usize)>,
    /// Open brackets and the lines they opened on (PHP's lexer reports
    /// unclosed and unmatched brackets itself).
    brackets: Vec<(u8, u32)>,
    lines: LineIndex,
    /// Whether to check brackets (not for `{$…}` fragments).
    check_brackets: bool,
    ends: Rc<StringEnds>,
    /// Where the data after `__halt_compiler();` starts, once found
    /// (`__COMPILER_HALT_OFFSET__`).
    halt_offset: Rc<Cell<Option<usize>>>,
    /// How far a top-level `namespace NAME {` has been read (its words
    /// so far), so that the brace opening a namespace block is known.
    namespace_head: u8,
    /// The one open bracket is a namespace block's, whose statements are
    /// top-level ones: a `__halt_compiler();` there stops the lexing as
    /// at the outermost scope (and then PHP finds the block unclosed).
    in_namespace_block: bool,
}

impl<'s> Lexer<'s> {
    /// A lexer for a whole script, which starts in HTML mode.
    pub fn new(src: &'s [u8]) -> Lexer<'s> {
        Lexer::with_ends(src, Rc::default())
    }

    /// A lexer for a whole script that keeps the string ends it finds in
    /// `ends`, for [`Lexer::fragment`] and [`interpolation_end`] to reuse.
    pub fn with_ends(src: &'s [u8], ends: Rc<StringEnds>) -> Lexer<'s> {
        Lexer {
            src,
            html_start: shebang_end(src),
            mode: Mode::Html,
            queued: None,
            brackets: Vec::new(),
            lines: LineIndex::new(src),
            check_brackets: true,
            ends,
            halt_offset: Rc::default(),
            namespace_head: 0,
            in_namespace_block: false,
        }
    }

    /// Shares where `__halt_compiler();` ends the script, once found.
    pub fn with_halt_offset(mut self, halt: Rc<Cell<Option<usize>>>) -> Lexer<'s> {
        self.halt_offset = halt;
        self
    }

    /// `__halt_compiler` at `end`: if `();` (or `()?>`) follows, the offset
    /// just after it, where the script's data starts.
    fn halt_data_start(&self, end: usize) -> Option<usize> {
        let mut i = end;
        let expect = |i: &mut usize, what: &[u8]| {
            while matches!(self.src.get(*i), Some(b' ' | b'\t' | b'\r' | b'\n')) {
                *i += 1;
            }
            let ok = self.src[*i..].starts_with(what);
            *i += what.len();
            ok
        };
        if !(expect(&mut i, b"(") && expect(&mut i, b")")) {
            return None;
        }
        let mut j = i;
        if expect(&mut j, b";") {
            return Some(j);
        }
        let mut j = i;
        if expect(&mut j, b"?>") {
            // `?>` takes one newline after it with it, as everywhere.
            match &self.src[j..] {
                [b'\r', b'\n', ..] => j += 2,
                [b'\n' | b'\r', ..] => j += 1,
                _ => {}
            }
            return Some(j);
        }
        None
    }

    /// A lexer for a code fragment of `src` starting at `start` (used for
    /// the `{$…}` parts of double-quoted strings); offsets stay absolute.
    /// `ends` is the whole script's lexer's.
    pub fn fragment(src: &'s [u8], start: usize, end: usize, ends: Rc<StringEnds>) -> Lexer<'s> {
        Lexer {
            src,
            html_start: end,
            mode: Mode::Code {
                inner: Token::lexer_with_extras(
                    &src[start..end],
                    Extras {
                        base: start,
                        ends: ends.clone(),
                    },
                ),
                base: start,
            },
            queued: None,
            brackets: Vec::new(),
            lines: LineIndex::new(b""),
            check_brackets: false,
            ends,
            halt_offset: Rc::default(),
            namespace_head: 0,
            in_namespace_block: false,
        }
    }

    /// Reads inline HTML up to the next open tag and switches to code mode.
    fn html(&mut self) -> Option<Spanned<'s>> {
        let start = self.html_start;
        let rest = &self.src[start..];
        let (text_end, code_start, echo) = match find_open_tag(rest) {
            Some((at, len, echo)) => (start + at, start + at + len, echo),
            None => (self.src.len(), self.src.len(), false),
        };
        if code_start >= self.src.len() && text_end == self.src.len() {
            self.mode = Mode::Done;
        } else {
            self.mode = Mode::Code {
                inner: Token::lexer_with_extras(
                    &self.src[code_start..],
                    Extras {
                        base: code_start,
                        ends: self.ends.clone(),
                    },
                ),
                base: code_start,
            };
        }
        if echo {
            // `<?=` is `echo`; any HTML before it comes first.
            let tok = (text_end, Token::Echo, code_start);
            if text_end > start {
                self.queued = Some(tok);
            } else {
                return Some(Ok(tok));
            }
        }
        if text_end > start {
            return Some(Ok((start, Token::InlineHtml(&self.src[start..text_end]), text_end)));
        }
        self.next()
    }
}

/// Finds the first open tag in `text`: returns its offset, its length and
/// whether it is the echo form `<?=`. `short_open_tag` is on by default
/// (also under `php -n`), so a bare `<?` opens code too: `<?php` counts
/// as the long tag only when whitespace or the end follows it, and
/// otherwise (`<?phpx`, `<?xml`) the code starts right after the `<?`.
fn find_open_tag(text: &[u8]) -> Option<(usize, usize, bool)> {
    let at = text.windows(2).position(|w| w == b"<?")?;
    let after = &text[at + 2..];
    if after.first() == Some(&b'=') {
        return Some((at, 3, true));
    }
    if after.len() >= 3 && after[..3].eq_ignore_ascii_case(b"php") {
        match after.get(3) {
            None => return Some((at, 5, false)),
            Some(b' ' | b'\t' | b'\r' | b'\n') => return Some((at, 6, false)),
            _ => {}
        }
    }
    Some((at, 2, false))
}

/// Whether `rest`, after the word `enum`, starts (past blanks) with a
/// name other than `extends` and `implements`.
fn enum_follows(rest: &[u8]) -> bool {
    let blanks = rest
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
        .count();
    if blanks == 0 {
        return false;
    }
    let word: Vec<u8> = rest[blanks..]
        .iter()
        .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80)
        .copied()
        .collect();
    !word.is_empty()
        && !word[0].is_ascii_digit()
        && !word.eq_ignore_ascii_case(b"extends")
        && !word.eq_ignore_ascii_case(b"implements")
}

impl<'s> Iterator for Lexer<'s> {
    type Item = Spanned<'s>;

    fn next(&mut self) -> Option<Spanned<'s>> {
        if let Some(tok) = self.queued.take() {
            return Some(Ok(tok));
        }
        let (tok, span, base) = match &mut self.mode {
            Mode::Done => {
                if let Some((c, line)) = self.brackets.pop() {
                    self.brackets.clear();
                    return Some(Err((self.code_end(), self.unclosed(c, line))));
                }
                return None;
            }
            Mode::Html => return self.html(),
            Mode::Code { inner, base } => match inner.next() {
                None => {
                    self.mode = Mode::Done;
                    return self.next();
                }
                Some(tok) => (tok, inner.span(), *base),
            },
        };
        let (start, end) = (base + span.start, base + span.end);
        if let Ok(t) = &tok {
            self.follow_namespace_head(t);
            if let Some(err) = self.track_bracket(t, start) {
                return Some(Err((start, err)));
            }
            if self.brackets.is_empty() {
                self.in_namespace_block = false;
            }
        }
        match tok {
            Err(LexError::UnexpectedEof) if self.src.get(start) == Some(&b'\'') => {
                let rest = &self.src[start + 1..];
                let end = rest
                    .iter()
                    .position(|&c| c == b'\n' || c == b'\r')
                    .unwrap_or(rest.len());
                let text = String::from_utf8_lossy(&rest[..end.min(30)]).into_owned();
                Some(Err((start, LexError::UnterminatedString(text))))
            }
            Err(err @ LexError::UnterminatedHeredoc { .. }) => {
                self.mode = Mode::Done;
                Some(Err((self.src.len(), err)))
            }
            Err(err @ (LexError::BodyIndentation { at, .. } | LexError::MixedIndentation { at })) => {
                Some(Err((base + at, err)))
            }
            // An unterminated string or comment ends at the end of the file.
            Err(LexError::UnexpectedEof) => Some(Err((self.src.len(), LexError::UnexpectedEof))),
            Err(LexError::UnclosedString(open)) => {
                // PHP names the innermost bracket still open, inside the
                // string's code or around the string; else what it expects.
                let inner = match open {
                    OpenString::Bracket(c, at) => Some((c, self.lines.line((base + at) as u32))),
                    _ => None,
                };
                let err = match (open, inner.or_else(|| self.brackets.last().copied())) {
                    (OpenString::Comment(at), _) => LexError::UnterminatedComment(self.lines.line((base + at) as u32)),
                    (_, Some((c, line))) => self.unclosed(c, line),
                    (OpenString::Expecting(what), None) => LexError::UnexpectedEofExpecting(what),
                    (_, None) => LexError::UnexpectedEof,
                };
                self.brackets.clear();
                self.mode = Mode::Done;
                Some(Err((self.src.len(), err)))
            }
            Err(LexError::UnexpectedChar(c)) => Some(Ok((start, Token::BadChar(c), end))),
            Err(err) => Some(Err((start, err))),
            Ok(Token::UnterminatedComment) => {
                let line = LineIndex::new(&self.src[..start]).starts.len() as u32;
                Some(Err((start, LexError::UnterminatedComment(line))))
            }
            // Only the outermost scope's `__halt_compiler();` ends the
            // script; elsewhere the parser refuses it, as PHP's does.
            Ok(Token::HaltCompiler) if !self.brackets.is_empty() && !self.top_level_block() => {
                Some(Ok((start, Token::HaltCompiler, end)))
            }
            Ok(Token::HaltCompiler) => match self.halt_data_start(end) {
                // The rest of the file is data: the statement ends here.
                Some(data) => {
                    self.halt_offset.set(Some(data));
                    self.mode = Mode::Done;
                    Some(Ok((start, Token::Semicolon, data)))
                }
                None => Some(Ok((start, Token::HaltCompiler, end))),
            },
            Ok(Token::CloseTag) => {
                // `?>` ends the statement; what follows is HTML again.
                self.html_start = end;
                self.mode = Mode::Html;
                Some(Ok((start, Token::Semicolon, end)))
            }
            Ok(Token::Amp) if !followed_by_var(&self.src[end..]) => Some(Ok((start, Token::AmpNotVar, end))),
            // `enum` is a keyword only before a name that is not
            // `extends`/`implements` (PHP's lexer looks ahead the same way).
            Ok(Token::Ident(w)) if w.eq_ignore_ascii_case(b"enum") && enum_follows(&self.src[end..]) => {
                Some(Ok((start, Token::Enum, end)))
            }
            Ok(Token::QualifiedName(name)) if name.len() > 10 && name[..10].eq_ignore_ascii_case(b"namespace\\") => {
                Some(Ok((start, Token::RelativeName(&name[10..]), end)))
            }
            Ok(Token::ElseIf) => {
                self.queued = Some((start, Token::If, end));
                Some(Ok((start, Token::Else, end)))
            }
            Ok(tok) => Some(Ok((start, tok, end))),
        }
    }
}

impl Lexer<'_> {
    /// Follows `namespace`, its name and `{` at the top level, before the
    /// brace is tracked.
    fn follow_namespace_head(&mut self, tok: &Token<'_>) {
        if !self.brackets.is_empty() {
            return;
        }
        self.namespace_head = match (self.namespace_head, tok) {
            (_, Token::Namespace) => 1,
            (1, Token::Ident(_) | Token::QualifiedName(_)) => 2,
            (1 | 2, Token::LBrace) => {
                self.in_namespace_block = true;
                0
            }
            _ => 0,
        };
    }

    /// Where the code ends: the end of the file, or the data after a
    /// `__halt_compiler();` (where PHP's lexer stopped).
    fn code_end(&self) -> usize {
        self.halt_offset.get().unwrap_or(self.src.len())
    }

    /// Whether the statements being read are a namespace block's.
    fn top_level_block(&self) -> bool {
        self.in_namespace_block && self.brackets.len() == 1
    }

    /// Follows bracket nesting; returns PHP's error for a bad close.
    fn track_bracket(&mut self, tok: &Token<'_>, pos: usize) -> Option<LexError> {
        if !self.check_brackets {
            return None;
        }
        let (open, close) = match tok {
            Token::LParen | Token::Cast(_) => {
                if let Token::LParen = tok {
                    self.brackets.push((b'(', self.lines.line(pos as u32)));
                }
                return None;
            }
            Token::LBracket | Token::AttributeStart => {
                self.brackets.push((b'[', self.lines.line(pos as u32)));
                return None;
            }
            Token::LBrace => {
                self.brackets.push((b'{', self.lines.line(pos as u32)));
                return None;
            }
            Token::RParen => (b'(', b')'),
            Token::RBracket => (b'[', b']'),
            Token::RBrace => (b'{', b'}'),
            _ => return None,
        };
        match self.brackets.pop() {
            None => Some(LexError::Unmatched(close)),
            Some((c, _)) if c == open => None,
            Some((c, line)) => {
                let here = self.lines.line(pos as u32);
                Some(LexError::Mismatched(c, (line != here).then_some(line), close))
            }
        }
    }

    /// PHP's error for bracket `c`, opened on `line`, still open at the end.
    fn unclosed(&self, c: u8, line: u32) -> LexError {
        let end = self.lines.line(self.code_end() as u32);
        LexError::Unclosed(c, (line != end).then_some(line))
    }
}

/// Whether `rest`, after blanks, starts with a variable or `...` (PHP's
/// rule for the two kinds of `&`).
fn followed_by_var(rest: &[u8]) -> bool {
    let rest = &rest[rest
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
        .count()..];
    rest.starts_with(b"$") || rest.starts_with(b"...")
}

/// Byte offsets to line numbers.
pub struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(src: &[u8]) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            src.iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        LineIndex { starts }
    }

    /// The 1-based line of byte offset `pos`.
    pub fn line(&self, pos: u32) -> u32 {
        match self.starts.binary_search(&pos) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    }
}

/// Where a script's text starts: after a first line `#!…` (with its
/// newline), which PHP's CLI skips in the file it runs.
fn shebang_end(src: &[u8]) -> usize {
    if !src.starts_with(b"#!") {
        return 0;
    }
    src.iter().position(|&c| c == b'\n').map_or(src.len(), |i| i + 1)
}
