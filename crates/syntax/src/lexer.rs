//! The lexer: PHP source bytes to tokens.
//!
//! The token rules are a [logos] state machine ([`Token`]); [`Lexer`] wraps it
//! with what a regular lexer cannot do alone: PHP's two modes (text outside
//! `<?php … ?>` is inline HTML, text inside is code), `?>` acting as `;`,
//! `<?=` meaning `echo`, and `elseif` arriving as `else if` so the grammar
//! needs one `if` rule only. Tokens carry their source text so that parse
//! errors can quote it the way PHP does (see the `Display` impl).

use std::fmt;

use logos::Logos;

use crate::ast::CastType;

/// One token. Keywords are case-insensitive, as in PHP.
#[derive(Logos, Debug, Clone, Copy, PartialEq)]
#[logos(utf8 = false)]
#[logos(skip br"[ \t\r\n\x0c]+")]
#[logos(error(LexError, LexError::from_lexer))]
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
    /// PHP keywords for features minizts leaves out (docs/language.md); the
    /// parser reports them as unsupported rather than as odd identifiers.
    #[regex(
        b"(?i:class|interface|trait|enum|extends|implements|new|clone|instanceof|try|catch|finally|throw|namespace|include|include_once|require|require_once|goto|yield|match|abstract|final|private|protected|public|readonly|declare|enddeclare|endif|endwhile|endfor|endforeach|endswitch|insteadof|__halt_compiler|eval)",
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
    #[token("&")]
    Amp,
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

    // Literals and names.
    #[regex(br"\$[a-zA-Z_\x80-\xff][a-zA-Z0-9_\x80-\xff]*", |lex| as_str(&lex.slice()[1..]))]
    Variable(&'s str),
    #[regex(br"[a-zA-Z_\x80-\xff][a-zA-Z0-9_\x80-\xff]*", |lex| as_str(lex.slice()))]
    Ident(&'s str),
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
    SingleQuoted(&'s [u8]),
    /// A double-quoted string; the payload is the text between the quotes.
    /// The parser resolves escapes and interpolation.
    #[regex(br#""([^"\\]|\\(.|\n))*""#, |lex| { let s = lex.slice(); &s[1..s.len() - 1] })]
    DoubleQuoted(&'s [u8]),

    // Comments are skipped; `//` and `#` comments end at a newline or `?>`.
    #[regex(br"//|#", line_comment)]
    #[regex(br"/\*([^*]|\*+[^*/])*\*+/", logos::skip)]
    Comment,
    /// A `/*` comment that runs to the end of the file.
    #[regex(br"/\*([^*]|\*+[^*/])*\**")]
    UnterminatedComment,

    /// Text outside `<?php … ?>`. Produced by [`Lexer`], never by logos.
    InlineHtml(&'s [u8]),
}

/// A token the lexer could not read.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum LexError {
    /// A byte that starts no token.
    UnexpectedChar(u8),
    /// A string or comment that runs to the end of the file.
    #[default]
    UnexpectedEof,
    /// An identifier or variable name that is not valid UTF-8.
    BadName,
    /// `/*` without `*/`; the payload is the line it starts on.
    UnterminatedComment(u32),
    /// A `'` string without its closing quote; the payload is the text
    /// after the quote, up to the end of its line.
    UnterminatedString(String),
    /// An opening bracket never closed: the bracket and its line.
    Unclosed(u8, u32),
    /// A closing bracket with nothing open.
    Unmatched(u8),
    /// A closing bracket that does not match the open one (which opened on
    /// the given line).
    Mismatched(u8, u32, u8),
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
            LexError::BadName => write!(f, "syntax error, name is not valid UTF-8"),
            LexError::UnterminatedComment(line) => write!(f, "Unterminated comment starting line {line}"),
            LexError::UnterminatedString(text) => write!(f, "syntax error, unexpected string content \"{text}\""),
            LexError::Unclosed(c, line) => write!(f, "Unclosed '{}' on line {line}", *c as char),
            LexError::Unmatched(c) => write!(f, "Unmatched '{}'", *c as char),
            LexError::Mismatched(open, line, close) => write!(
                f,
                "Unclosed '{}' on line {line} does not match '{}'",
                *open as char, *close as char
            ),
        }
    }
}

fn as_str(bytes: &[u8]) -> Result<&str, LexError> {
    std::str::from_utf8(bytes).map_err(|_| LexError::BadName)
}

fn lex_cast<'s>(lex: &mut logos::Lexer<'s, Token<'s>>) -> CastType {
    let inner = lex.slice()[1..lex.slice().len() - 1].trim_ascii().to_ascii_lowercase();
    match inner.as_slice() {
        b"int" | b"integer" => CastType::Int,
        b"bool" | b"boolean" => CastType::Bool,
        b"float" | b"double" | b"real" => CastType::Float,
        b"string" | b"binary" => CastType::String,
        b"array" => CastType::Array,
        b"object" => CastType::Object,
        _ => CastType::Unset,
    }
}

/// Skips a `//` or `#` comment up to (not including) the newline or `?>`.
fn line_comment<'s>(lex: &mut logos::Lexer<'s, Token<'s>>) -> logos::Skip {
    let rest = lex.remainder();
    let mut n = 0;
    while n < rest.len() {
        match rest[n] {
            b'\n' | b'\r' => break,
            b'?' if rest.get(n + 1) == Some(&b'>') => break,
            _ => n += 1,
        }
    }
    lex.bump(n);
    logos::Skip
}

impl fmt::Display for Token<'_> {
    /// How PHP names a token in "syntax error, unexpected …".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Token::*;
        let text = match self {
            Variable(name) => return write!(f, "variable \"${name}\""),
            Ident(name) => return write!(f, "identifier \"{name}\""),
            Int(text) => return write!(f, "integer \"{text}\""),
            Float(text) => return write!(f, "floating-point number \"{text}\""),
            SingleQuoted(s) => return write!(f, "single-quoted string \"{}\"", String::from_utf8_lossy(s)),
            DoubleQuoted(s) => return write!(f, "double-quoted string \"{}\"", String::from_utf8_lossy(s)),
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
            Exit => "exit",
            Die => "die",
            Const => "const",
            Array => "array",
            List => "list",
            LogicalAnd => "and",
            LogicalOr => "or",
            LogicalXor => "xor",
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
            Amp => "&",
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
            DoubleColon => "::",
            Backslash => "\\",
            Dollar => "$",
            CloseTag => "?>",
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
}

impl<'s> Lexer<'s> {
    /// A lexer for a whole script, which starts in HTML mode.
    pub fn new(src: &'s [u8]) -> Lexer<'s> {
        Lexer {
            src,
            html_start: 0,
            mode: Mode::Html,
            queued: None,
            brackets: Vec::new(),
            lines: LineIndex::new(src),
            check_brackets: true,
        }
    }

    /// A lexer for a code fragment of `src` starting at `start` (used for
    /// the `{$…}` parts of double-quoted strings); offsets stay absolute.
    pub fn fragment(src: &'s [u8], start: usize, end: usize) -> Lexer<'s> {
        Lexer {
            src,
            html_start: end,
            mode: Mode::Code {
                inner: Token::lexer(&src[start..end]),
                base: start,
            },
            queued: None,
            brackets: Vec::new(),
            lines: LineIndex::new(b""),
            check_brackets: false,
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
                inner: Token::lexer(&self.src[code_start..]),
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

/// Finds `<?php` (followed by whitespace or the end) or `<?=` in `text`:
/// returns its offset, its length and whether it is the echo form.
fn find_open_tag(text: &[u8]) -> Option<(usize, usize, bool)> {
    let mut from = 0;
    while let Some(i) = text[from..].windows(2).position(|w| w == b"<?") {
        let at = from + i;
        let after = &text[at + 2..];
        if after.first() == Some(&b'=') {
            return Some((at, 3, true));
        }
        if after.len() >= 3 && after[..3].eq_ignore_ascii_case(b"php") {
            match after.get(3) {
                None => return Some((at, 5, false)),
                Some(b' ' | b'\t' | b'\r') => return Some((at, 6, false)),
                Some(b'\n') => return Some((at, 6, false)),
                _ => {}
            }
        }
        from = at + 2;
    }
    None
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
                    return Some(Err((self.src.len(), LexError::Unclosed(c, line))));
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
            if let Some(err) = self.track_bracket(t, start) {
                return Some(Err((start, err)));
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
            // An unterminated string or comment ends at the end of the file.
            Err(LexError::UnexpectedEof) => Some(Err((self.src.len(), LexError::UnexpectedEof))),
            Err(err) => Some(Err((start, err))),
            Ok(Token::UnterminatedComment) => {
                let line = LineIndex::new(&self.src[..start]).starts.len() as u32;
                Some(Err((start, LexError::UnterminatedComment(line))))
            }
            Ok(Token::CloseTag) => {
                // `?>` ends the statement; what follows is HTML again.
                self.html_start = end;
                self.mode = Mode::Html;
                Some(Ok((start, Token::Semicolon, end)))
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
            Token::LBracket => {
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
            Some((c, line)) => Some(LexError::Mismatched(c, line, close)),
        }
    }
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
