//! The parser: tokens to an arena-allocated AST.
//!
//! The grammar (`grammar.lalrpop`) describes the shapes; [`Builder`] holds
//! the arena and does the work the grammar's actions need: allocating nodes,
//! resolving string escapes and interpolation, reading number literals, and
//! placing assignments the way PHP does. Parse errors are worded as PHP
//! words them ("syntax error, unexpected token \";\", expecting \")\"").

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::fmt;
use std::rc::Rc;

use bumpalo::Bump;
use lalrpop_util::{lalrpop_mod, ParseError};

use crate::ast::*;
use crate::lexer::{interpolation_end, AltSyntax, Heredoc, Lexer, StringEnds, Token};

lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, dead_code)]
    grammar
);

/// A syntax error: where, and PHP's message for it.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    /// Byte offset into the source.
    pub pos: usize,
    /// The message without the "Parse error:" prefix.
    pub message: String,
    /// A compile-time "Fatal error" PHP raises while parsing rather than a
    /// "Parse error".
    pub fatal: bool,
    /// PHP reports it with no file or line ("in [no active file] on line
    /// 0"): it finds it while looking ahead in a heredoc.
    pub unlocated: bool,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SyntaxError {}

mod classes;

type ParseResult<'t, T> = Result<T, ParseError<usize, Token<'t>, SyntaxError>>;

fn user_error<'t, T>(pos: usize, message: impl Into<String>) -> ParseResult<'t, T> {
    Err(ParseError::User {
        error: SyntaxError {
            pos,
            message: message.into(),
            fatal: false,
            unlocated: false,
        },
    })
}

fn fatal_error<'t, T>(pos: usize, message: impl Into<String>) -> ParseResult<'t, T> {
    Err(ParseError::User {
        error: SyntaxError {
            pos,
            message: message.into(),
            fatal: true,
            unlocated: false,
        },
    })
}

/// How deeply statements and expressions may nest. Later passes walk the
/// tree recursively; this keeps them well inside the engine thread's stack.
pub const MAX_DEPTH: usize = 2000;

fn too_deep() -> String {
    format!("minizts: the script is nested too deeply (more than {MAX_DEPTH} levels)")
}

/// Parses a whole script. The AST borrows from `src` and lives in `arena`.
pub fn parse<'a>(arena: &'a Bump, src: &'a [u8]) -> Result<Script<'a>, SyntaxError> {
    let b = Builder::new(arena, src);
    let halt = Rc::new(Cell::new(None));
    let tokens = AltSyntax::new(
        Lexer::with_ends(src, b.ends.clone())
            .with_halt_offset(halt.clone())
            .map(lex_adapter),
        src.len(),
        unclosed_block,
    );
    match grammar::ScriptParser::new().parse(&b, tokens) {
        Ok(stmts) if crate::ast::depth::exceeds(stmts, MAX_DEPTH) => Err(SyntaxError {
            pos: 0,
            message: too_deep(),
            fatal: true,
            unlocated: false,
        }),
        Ok(stmts) => Ok(Script {
            stmts,
            halt_offset: halt.get(),
            strict_types: b.strict_types.get(),
        }),
        Err(err) => {
            let at_script_end = match &err {
                ParseError::UnrecognizedToken {
                    token: (pos, tok, _),
                    expected,
                } => expected.len() > 4 && !matches!(tok, Token::Unsupported(_)) && complete_before(src, *pos),
                _ => false,
            };
            let mut e = describe(err, src);
            if at_script_end {
                e.message.push_str(", expecting end of file");
            }
            Err(e)
        }
    }
}

/// Whether the tokens before byte `pos` make a whole script. PHP's parser
/// (bison, with default reductions) reads a token that cannot continue a
/// finished top-level statement as one that should have been the end of
/// the file, and says so: "unexpected token \"=\", expecting end of file".
/// The LR(1) tables here would list every token that can start a
/// statement instead; parsing the part before the token tells the two
/// apart. Only run on the error path.
fn complete_before(src: &[u8], pos: usize) -> bool {
    let arena = Bump::new();
    let b = Builder::new(&arena, src);
    let tokens = AltSyntax::new(
        Lexer::with_ends(src, b.ends.clone()).map(lex_adapter),
        src.len(),
        unclosed_block,
    )
    .take_while(|t| !matches!(t, Ok((start, _, _)) if *start >= pos));
    grammar::ScriptParser::new().parse(&b, tokens).is_ok()
}

/// The end of the file inside an alternative-syntax block.
fn unclosed_block(eof: usize, expecting: &str) -> SyntaxError {
    SyntaxError {
        pos: eof,
        message: format!("syntax error, unexpected end of file, expecting {expecting}"),
        fatal: false,
        unlocated: false,
    }
}

fn lex_adapter(item: crate::lexer::Spanned<'_>) -> Result<(usize, Token<'_>, usize), SyntaxError> {
    item.map_err(|(pos, err)| SyntaxError {
        pos,
        message: err.to_string(),
        fatal: false,
        unlocated: matches!(err, crate::lexer::LexError::BodyIndentationUnlocated { .. }),
    })
}

/// Turns lalrpop's error into PHP's wording.
fn describe(err: ParseError<usize, Token<'_>, SyntaxError>, src: &[u8]) -> SyntaxError {
    let eof = src.len();
    match err {
        ParseError::InvalidToken { location } => SyntaxError {
            pos: location,
            message: "syntax error, unexpected character".into(),
            fatal: false,
            unlocated: false,
        },
        ParseError::UnrecognizedEof { location, expected } => SyntaxError {
            pos: location.min(eof),
            message: format!("syntax error, unexpected end of file{}", expecting(&expected)),
            fatal: false,
            unlocated: false,
        },
        ParseError::UnrecognizedToken {
            token: (pos, tok, end),
            expected,
        } => {
            let expected = after_default_reductions(expected, src, pos);
            let (name, pos) = unexpected(&tok, src, pos, end);
            let mut message = format!("syntax error, unexpected {name}{}", expecting(&expected));
            if let Token::Unsupported(word) = tok {
                message.push_str(&format!(" (minizts does not support `{}`)", word.to_ascii_lowercase()));
            }
            SyntaxError {
                pos,
                message,
                fatal: false,
                unlocated: false,
            }
        }
        ParseError::ExtraToken { token: (pos, tok, end) } => {
            let (name, pos) = unexpected(&tok, src, pos, end);
            SyntaxError {
                pos,
                message: format!("syntax error, unexpected {name}, expecting end of file"),
                fatal: false,
                unlocated: false,
            }
        }
        ParseError::User { error } => error,
    }
}

/// How PHP names an unexpected token (`zend_yytnamerr`), and where its
/// parser is then: after the token, which a string or a heredoc's opening
/// line may take to a later line. A token with text shows its first line,
/// without the quotes around it, cut at 30 characters.
fn unexpected(tok: &Token<'_>, src: &[u8], pos: usize, end: usize) -> (String, usize) {
    let raw = &src[pos.min(src.len())..end.min(src.len())];
    let shown = |kind: &str, text: &[u8]| {
        let text = &text[..text.iter().position(|&c| c == b'\n').unwrap_or(text.len())];
        let text = text
            .strip_prefix(b"'")
            .or_else(|| text.strip_prefix(b"\""))
            .unwrap_or(text);
        let text = text
            .strip_suffix(b"'")
            .or_else(|| text.strip_suffix(b"\""))
            .unwrap_or(text);
        let text = String::from_utf8_lossy(text);
        if text.chars().count() > 33 {
            let cut: String = text.chars().take(30).collect();
            format!("{kind} \"{cut}...\"")
        } else {
            format!("{kind} \"{text}\"")
        }
    };
    match tok {
        // An interpolated string is read as its parts, from its `"`.
        Token::DoubleQuoted(body) if has_interpolation(body) => ("double-quote mark".into(), pos),
        Token::SingleQuoted(_) | Token::DoubleQuoted(_) => {
            let kind = match raw.first() {
                Some(b'"') => "double-quoted string",
                Some(b'\'') => "single-quoted string",
                _ => "quoted string",
            };
            (shown(kind, raw), end.saturating_sub(1))
        }
        // Its token is the opening line, newline included.
        Token::Heredoc(h) => (shown("heredoc start", h.header), pos + h.body_offset as usize),
        Token::Variable(_)
        | Token::Ident(_)
        | Token::QualifiedName(_)
        | Token::FullyQualifiedName(_)
        | Token::RelativeName(_)
        | Token::Int(_)
        | Token::Float(_) => {
            let full = tok.to_string();
            let kind = &full[..full.find(" \"").unwrap_or(full.len())];
            (shown(kind, raw), pos)
        }
        _ => (tok.to_string(), pos),
    }
}

/// Whether a double-quoted string's text has a `$name`, `${` or `{$`
/// (outside escapes), which makes PHP's lexer read it in parts.
fn has_interpolation(body: &[u8]) -> bool {
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\\' => i += 2,
            b'$' if body.get(i + 1).is_some_and(|&c| c == b'{' || is_name_start(c)) => return true,
            b'{' if body.get(i + 1) == Some(&b'$') => return true,
            _ => i += 1,
        }
    }
    false
}

/// The tokens PHP's parser expects where these tables expect `expected`,
/// in the states where they differ because bison makes a state's one
/// reduction its default and performs it before it sees the error: in a
/// group use's braces (the list's optional trailing comma is reduced, so
/// only the `}` is left), after an import (reduced, so neither `as` nor
/// a group's `\` is left) and after `namespace` and its name (the
/// mid-rule action before a block's `{` is reduced). Only on the error
/// path.
fn after_default_reductions(expected: Vec<String>, src: &[u8], pos: usize) -> Vec<String> {
    let has = |t: &str| expected.iter().any(|e| e == t);
    let group_use = [
        "\"as\"",
        "\",\"",
        "\"}\"",
        "IdentToken",
        "QualifiedToken",
        "\"function\"",
        "\"const\"",
    ];
    if has("\"}\"") && expected.iter().all(|e| group_use.contains(&e.as_str())) {
        return vec!["\"}\"".into()];
    }
    let import = ["\"as\"", "\";\"", "\",\"", "\"\\\\\""];
    if has("\";\"") && expected.iter().all(|e| import.contains(&e.as_str())) {
        return vec!["\",\"".into(), "\";\"".into()];
    }
    if has("\"{\"") {
        let mut before = [None, None];
        for (start, tok, _) in Lexer::new(src).map_while(Result::ok) {
            if start >= pos {
                break;
            }
            before = [before[1].take(), Some(tok)];
        }
        let namespace = |t: &Option<Token<'_>>| matches!(t, Some(Token::Namespace));
        let name_after_namespace = namespace(&before[0]) && (has("\";\"") && expected.len() == 2);
        if namespace(&before[1]) || name_after_namespace {
            return vec!["\"{\"".into()];
        }
    }
    expected
}

/// Like bison, PHP lists the expected tokens when there are at most four.
/// (The sets come from a different automaton than PHP's, so they do not
/// always agree with PHP's; the "unexpected" part always does.)
fn expecting(expected: &[String]) -> String {
    if expected.is_empty() || expected.len() > 4 {
        return String::new();
    }
    let mut names = Vec::new();
    for name in expected {
        let php = if let Some(inner) = name.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            format!("\"{}\"", inner.replace("\\\\", "\\"))
        } else {
            match name.as_str() {
                "VariableToken" => "variable".into(),
                "IdentToken" => "identifier".into(),
                "QualifiedToken" => "namespaced name".into(),
                "FullyQualifiedToken" => "fully qualified name".into(),
                "RelativeToken" => "namespace-relative name".into(),
                "IntLit" => "integer".into(),
                "FloatLit" => "floating-point number".into(),
                _ => return String::new(),
            }
        };
        names.push(php);
    }
    // PHP names variables before punctuation, and `,` before `;`.
    names.sort_by_key(|n| !n.starts_with(char::is_alphabetic));
    if let (Some(semi), Some(comma)) = (
        names.iter().position(|n| n == "\";\""),
        names.iter().position(|n| n == "\",\""),
    ) {
        if comma > semi {
            names.swap(semi, comma);
        }
    }
    format!(", expecting {}", names.join(" or "))
}

/// The head of a loop statement, before its body is known to be open or
/// closed (see the grammar's dangling-else rules).
pub enum LoopHead<'a> {
    While(&'a Expr<'a>),
    For(&'a [&'a Expr<'a>], &'a [&'a Expr<'a>], &'a [&'a Expr<'a>]),
    Foreach(&'a Expr<'a>, Option<&'a Expr<'a>>, &'a Expr<'a>, bool),
    /// A loop PHP's compiler refuses before compiling any of it.
    Refused(&'static str),
}

/// A prefix operator of the unary level.
#[derive(Clone, Copy)]
pub enum Prefix {
    Unary(UnaryOp),
    Silence,
    Cast(CastType),
}

/// Which assignment an `=`-like token makes.
#[derive(Clone, Copy)]
pub enum AssignKind {
    Plain,
    Ref,
    Op(BinaryOp),
}

/// What the grammar's actions build with.
pub struct Builder<'a> {
    arena: &'a Bump,
    src: &'a [u8],
    /// Nodes written in parentheses: an assignment never moves into them
    /// (`($a + $b) = 1` is an error, `$a + $b = 1` is `$a + ($b = 1)`).
    parenthesized: RefCell<HashSet<*const Expr<'a>>>,
    /// The string ends the lexer found (see [`StringEnds`]).
    ends: Rc<StringEnds>,
    /// How many `{$…}` parts the one being parsed is inside of.
    interpolation_depth: Cell<usize>,
    /// Whether a statement other than `declare` has been read (statements
    /// are reduced in source order).
    past_declares: Cell<bool>,
    /// Whether a statement other than `declare` or `;` has been read (a
    /// first `namespace` may come only after those).
    past_code: Cell<bool>,
    /// Set by `declare(strict_types=1)`.
    strict_types: Cell<bool>,
}

impl<'a> Builder<'a> {
    fn new(arena: &'a Bump, src: &'a [u8]) -> Builder<'a> {
        Builder {
            arena,
            src,
            parenthesized: RefCell::new(HashSet::new()),
            ends: Rc::default(),
            interpolation_depth: Cell::new(0),
            past_declares: Cell::new(false),
            past_code: Cell::new(false),
            strict_types: Cell::new(false),
        }
    }

    pub fn alloc<T>(&self, value: T) -> &'a T {
        self.arena.alloc(value)
    }

    pub fn slice<T>(&self, items: Vec<T>) -> &'a [T] {
        self.arena.alloc_slice_fill_iter(items)
    }

    /// `A|B` or, with an intersection among its members, a DNF type
    /// (`(A&B)|C`); a lone `(A&B)` is the intersection `A&B`.
    pub fn union_type(&self, first: Vec<&'a str>, rest: Vec<Vec<&'a str>>) -> &'a TypeHint<'a> {
        let grouped = first.len() > 1 || rest.iter().any(|m| m.len() > 1);
        let names: Vec<&'a str> = first.iter().chain(rest.iter().flatten()).copied().collect();
        if !grouped {
            return self.alloc(TypeHint {
                nullable: false,
                intersection: false,
                names: self.slice(names),
                dnf: &[],
            });
        }
        if rest.is_empty() {
            return self.alloc(TypeHint {
                nullable: false,
                intersection: true,
                names: self.slice(names),
                dnf: &[],
            });
        }
        let members: Vec<&'a [&'a str]> = std::iter::once(first).chain(rest).map(|m| self.slice(m)).collect();
        self.alloc(TypeHint {
            nullable: false,
            intersection: false,
            names: self.slice(names),
            dnf: self.slice(members),
        })
    }

    pub fn expr(&self, pos: usize, kind: ExprKind<'a>) -> &'a Expr<'a> {
        self.arena.alloc(Expr { pos: pos as u32, kind })
    }

    /// `global $a, $$b, …`: one statement, or a block of one per variable
    /// when some are named at run time.
    pub fn global(&self, pos: usize, vars: Vec<Result<&'a str, &'a Expr<'a>>>) -> Stmt<'a> {
        if vars.iter().all(Result::is_ok) {
            let names: Vec<&'a str> = vars.into_iter().flatten().collect();
            return self.stmt(pos, StmtKind::Global(self.slice(names)));
        }
        let stmts: Vec<Stmt<'a>> = vars
            .into_iter()
            .map(|v| match v {
                Ok(name) => self.stmt(pos, StmtKind::Global(self.slice(vec![name]))),
                Err(name) => self.stmt(pos, StmtKind::GlobalByName(name)),
            })
            .collect();
        self.stmt(pos, StmtKind::Block(self.slice(stmts)))
    }

    pub fn stmt(&self, pos: usize, kind: StmtKind<'a>) -> Stmt<'a> {
        self.past_declares.set(true);
        if !matches!(kind, StmtKind::Nop) {
            self.past_code.set(true);
        }
        Stmt { pos: pos as u32, kind }
    }

    /// `namespace A;` (a block's `namespace A { … }` comes through
    /// [`Builder::namespace_open`] and [`Builder::namespace_block`]).
    pub fn namespace(&self, pos: usize, name: Option<&'a str>, body: Option<&'a [Stmt<'a>]>) -> Stmt<'a> {
        let first = !self.past_code.get();
        self.stmt(pos, StmtKind::Namespace { name, body, first })
    }

    /// `namespace A {`, before the block's statements: whether it is the
    /// file's first statement.
    pub fn namespace_open(&self, pos: usize, name: Option<&'a str>) -> (usize, Option<&'a str>, bool) {
        let first = !self.past_code.get();
        self.past_code.set(true);
        // A `declare(strict_types=1)` inside is not the file's first
        // statement.
        self.past_declares.set(true);
        (pos, name, first)
    }

    pub fn namespace_block(&self, head: (usize, Option<&'a str>, bool), body: Vec<Stmt<'a>>) -> Stmt<'a> {
        let (pos, name, first) = head;
        let body = Some(self.slice(body));
        self.stmt(pos, StmtKind::Namespace { name, body, first })
    }

    /// `use A\B, C as D;` (or `use function …`, `use const …`).
    pub fn use_stmt(&self, pos: usize, kind: UseKind, items: Vec<UseItem<'a>>) -> Stmt<'a> {
        let items: Vec<UseItem<'a>> = items.into_iter().map(|u| UseItem { kind, ..u }).collect();
        self.stmt(pos, StmtKind::Use(self.slice(items)))
    }

    /// `use A\{B, C as D};` (or a typed group, `use function A\{…}`):
    /// each item's name gets the prefix; an item of a mixed group may
    /// have its own kind.
    pub fn group_use(&self, pos: usize, kind: UseKind, prefix: &'a str, items: Vec<UseItem<'a>>) -> Stmt<'a> {
        let items: Vec<UseItem<'a>> = items
            .into_iter()
            .map(|u| UseItem {
                kind: if kind == UseKind::Class { u.kind } else { kind },
                name: self.arena.alloc_str(&format!("{prefix}\\{}", u.name)),
                group: true,
                ..u
            })
            .collect();
        self.stmt(pos, StmtKind::Use(self.slice(items)))
    }

    /// The source text from `start` to `end`: a keyword as written.
    pub fn text(&self, start: usize, end: usize) -> &'a str {
        self.name(&self.src[start..end])
    }

    /// `namespace\a` as the AST keeps it (the compiler resolves it).
    pub fn relative_name(&self, rest: &'a [u8]) -> &'a str {
        self.arena.alloc_str(&format!("namespace\\{}", self.name(rest)))
    }

    /// `declare(name=value, …);` or with a block. `strict_types` is
    /// checked as PHP checks it and recorded for the script; `ticks` and
    /// `encoding` have no effect in PHP's CLI either without a tick
    /// function.
    pub fn declare(
        &self,
        pos: usize,
        items: Vec<(usize, &'a str, &'a Expr<'a>)>,
        block: Option<Vec<Stmt<'a>>>,
    ) -> ParseResult<'a, Stmt<'a>> {
        let first = !self.past_declares.get();
        for (at, name, value) in items {
            let literal = matches!(value.kind, ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_));
            match name.to_ascii_lowercase().as_str() {
                "strict_types" => {
                    // A block's statements are read before this check.
                    if block.is_some() {
                        return fatal_error(at, "strict_types declaration must not use block mode");
                    }
                    if !first {
                        return fatal_error(
                            at,
                            "strict_types declaration must be the very first statement in the script",
                        );
                    }
                    match value.kind {
                        ExprKind::Int(n @ (0 | 1)) => self.strict_types.set(n == 1),
                        _ => return fatal_error(at, "strict_types declaration must have 0 or 1 as its value"),
                    }
                }
                "ticks" | "encoding" if !literal => {
                    return fatal_error(at, format!("declare({name}) value must be a literal"));
                }
                "ticks" | "encoding" => {}
                _ => return self.unsupported(at, &format!("declare({name}) (PHP warns and ignores it)")),
            }
        }
        let kind = match block {
            Some(stmts) => StmtKind::Block(self.slice(stmts)),
            None => StmtKind::Nop,
        };
        let stmt = self.stmt(pos, kind);
        if first {
            // A declare does not end the run of declares at the start.
            self.past_declares.set(false);
            self.past_code.set(false);
        }
        Ok(stmt)
    }

    pub fn binary(&self, pos: usize, op: BinaryOp, lhs: &'a Expr<'a>, rhs: &'a Expr<'a>) -> &'a Expr<'a> {
        // A binary expression starts where its left operand starts.
        let pos = (lhs.pos as usize).min(pos);
        self.expr(pos, ExprKind::Binary { op, lhs, rhs })
    }

    pub fn prefix(&self, pos: usize, op: Prefix, e: &'a Expr<'a>) -> &'a Expr<'a> {
        match op {
            Prefix::Unary(UnaryOp::Neg) => self.negate(pos, e),
            Prefix::Unary(op) => self.expr(pos, ExprKind::Unary { op, expr: e }),
            Prefix::Silence => self.expr(pos, ExprKind::Silence(e)),
            Prefix::Cast(to) => self.expr(pos, ExprKind::Cast { to, expr: e }),
        }
    }

    /// `-literal` is folded into the literal (`-9223372036854775808` stays a
    /// float: PHP reads the digits first, and they overflow).
    pub fn negate(&self, pos: usize, e: &'a Expr<'a>) -> &'a Expr<'a> {
        match e.kind {
            ExprKind::Int(n) if !self.is_parenthesized(e) => self.expr(pos, ExprKind::Int(n.wrapping_neg())),
            _ => self.expr(
                pos,
                ExprKind::Unary {
                    op: UnaryOp::Neg,
                    expr: e,
                },
            ),
        }
    }

    /// A name from the source, as the `str` the engine carries (see
    /// [`crate::names`]); copied into the arena only when it is not UTF-8.
    pub fn name(&self, bytes: &'a [u8]) -> &'a str {
        match crate::names::from_bytes(bytes) {
            std::borrow::Cow::Borrowed(s) => s,
            std::borrow::Cow::Owned(s) => self.arena.alloc_str(&s),
        }
    }

    /// An array literal (or `list(…)`). `first` is where the first token
    /// after the opening bracket is. When the first item is missing (`[]`,
    /// `[, $b]`), PHP dates the array from that token (its lexer has read
    /// it when the grammar makes the empty item), and PHP's messages
    /// about the array ("Cannot use empty list") use that line.
    pub fn array(&self, pos: usize, first: usize, items: Vec<ArrayItem<'a>>, syntax: ArraySyntax) -> &'a Expr<'a> {
        let pos = match items.first() {
            Some(ArrayItem { value: Some(_), .. }) => pos,
            _ => first,
        };
        self.expr(pos, ExprKind::Array(self.slice(items), syntax))
    }

    /// `base{index}`: PHP 8 parses the curly-brace offset only to refuse
    /// it when it compiles it, and only there (see
    /// [`ExprKind::CurlyIndex`]).
    pub fn curly_index(&self, pos: usize, base: &'a Expr<'a>, index: &'a Expr<'a>) -> &'a Expr<'a> {
        let base = self.plain_offset(base);
        self.expr(pos, ExprKind::CurlyIndex { base, index })
    }

    /// A curly-brace offset as the base of another offset, where PHP
    /// reads it as `[…]`.
    fn plain_offset(&self, e: &'a Expr<'a>) -> &'a Expr<'a> {
        match e.kind {
            ExprKind::CurlyIndex { base, index } => self.expr(
                e.pos as usize,
                ExprKind::Index {
                    base,
                    index: Some(index),
                },
            ),
            _ => e,
        }
    }

    /// `#[…]`: one attribute at least (PHP's grammar wants one).
    pub fn attribute_group(&self, pos: usize, attributes: Vec<Attribute<'a>>) -> ParseResult<'a, Vec<Attribute<'a>>> {
        if attributes.is_empty() {
            let at = self.src[pos..].iter().position(|&c| c == b']').map_or(pos, |i| pos + i);
            return user_error(at, "syntax error, unexpected token \"]\"");
        }
        Ok(attributes)
    }

    /// `__halt_compiler();` anywhere but the outermost scope.
    pub fn halt_compiler_inside(&self, pos: usize) -> ParseResult<'a, Stmt<'a>> {
        fatal_error(pos, "__HALT_COMPILER() can only be used from the outermost scope")
    }

    /// `foreach ($s as $k => $v)`: PHP's compiler refuses a key taken by
    /// reference or destructured before anything else of the loop.
    pub fn foreach_with_key(
        &self,
        subject: &'a Expr<'a>,
        key: (&'a Expr<'a>, bool),
        value: (&'a Expr<'a>, bool),
    ) -> ParseResult<'a, LoopHead<'a>> {
        if key.1 {
            return Ok(LoopHead::Refused("Key element cannot be a reference"));
        }
        if let ExprKind::Array(..) = key.0.kind {
            return Ok(LoopHead::Refused("Cannot use list as key element"));
        }
        self.no_globals_write(key.0)?;
        self.no_globals_write(value.0)?;
        Ok(LoopHead::Foreach(subject, Some(key.0), value.0, value.1))
    }

    pub fn parenthesized(&self, e: &'a Expr<'a>) -> &'a Expr<'a> {
        self.parenthesized.borrow_mut().insert(e as *const _);
        e
    }

    fn is_parenthesized(&self, e: &'a Expr<'a>) -> bool {
        self.parenthesized.borrow().contains(&(e as *const _))
    }

    pub fn if_stmt(&self, pos: usize, cond: &'a Expr<'a>, then: Stmt<'a>, els: Option<Stmt<'a>>) -> Stmt<'a> {
        self.stmt(
            pos,
            StmtKind::If {
                cond,
                then: self.alloc(then),
                els: els.map(|s| self.alloc(s)),
            },
        )
    }

    /// `base[index]`; `$GLOBALS[name]` is the global variable `name`
    /// (PHP 8.1), which every context reaches by name.
    pub fn index(&self, pos: usize, base: &'a Expr<'a>, index: Option<&'a Expr<'a>>) -> &'a Expr<'a> {
        let base = self.plain_offset(base);
        match (&base.kind, index) {
            (ExprKind::Var("GLOBALS"), Some(name)) => self.expr(pos, ExprKind::VarVar { name, global: true }),
            _ => self.expr(pos, ExprKind::Index { base, index }),
        }
    }

    /// PHP 8.1's compile-time error for writing `$GLOBALS` as a whole
    /// (also as a `list()` or `foreach` target, or in `unset`).
    pub fn no_globals_write(&self, target: &'a Expr<'a>) -> ParseResult<'a, ()> {
        match &target.kind {
            ExprKind::Var("GLOBALS") => fatal_error(
                target.pos as usize,
                "$GLOBALS can only be modified using the $GLOBALS[$name] = $value syntax",
            ),
            // A reference item is refused for its right side first.
            ExprKind::Array(items, _) => {
                for item in items.iter().filter(|i| !i.by_ref) {
                    if let Some(v) = item.value {
                        self.no_globals_write(v)?;
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    pub fn loop_stmt(&self, pos: usize, head: LoopHead<'a>, body: Stmt<'a>) -> Stmt<'a> {
        let body = self.alloc(body);
        let kind = match head {
            LoopHead::While(cond) => StmtKind::While { cond, body },
            LoopHead::For(init, cond, step) => StmtKind::For { init, cond, step, body },
            LoopHead::Refused(message) => StmtKind::Refused(message),
            LoopHead::Foreach(subject, key, value, by_ref) => StmtKind::Foreach {
                subject,
                key,
                value,
                by_ref,
                body,
            },
        };
        self.stmt(pos, kind)
    }

    /// `break N;` / `continue N;`: PHP's compiler takes a literal only
    /// (a negative number is an expression), and a positive integer of
    /// those.
    pub fn break_continue(&self, pos: usize, is_break: bool, level: Option<&'a Expr<'a>>) -> Stmt<'a> {
        let n = match level {
            None => Ok(1),
            // `-1` was folded into its literal: it starts with the `-`.
            Some(e) if matches!(e.kind, ExprKind::Int(_)) && self.src.get(e.pos as usize) == Some(&b'-') => Err(false),
            Some(Expr {
                kind: ExprKind::Int(n), ..
            }) if *n >= 1 => Ok((*n).min(u32::MAX as i64) as u32),
            Some(Expr {
                kind: ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_),
                ..
            }) => Err(true),
            Some(_) => Err(false),
        };
        let kind = match (n, is_break) {
            (Ok(n), true) => StmtKind::Break(n),
            (Ok(n), false) => StmtKind::Continue(n),
            (Err(true), true) => StmtKind::Refused("'break' operator accepts only positive integers"),
            (Err(true), false) => StmtKind::Refused("'continue' operator accepts only positive integers"),
            (Err(false), true) => StmtKind::Refused("'break' operator with non-integer operand is no longer supported"),
            (Err(false), false) => {
                StmtKind::Refused("'continue' operator with non-integer operand is no longer supported")
            }
        };
        self.stmt(pos, kind)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn function(
        &self,
        pos: usize,
        end_pos: usize,
        name: &'a str,
        params: Vec<Param<'a>>,
        by_ref_return: bool,
        return_type: Option<&'a TypeHint<'a>>,
        uses: Vec<ClosureUse<'a>>,
        body: FunctionBody<'a>,
        attributes: Option<Vec<Attribute<'a>>>,
        is_static: bool,
    ) -> &'a FunctionDecl<'a> {
        self.alloc(FunctionDecl {
            pos: pos as u32,
            end_pos: end_pos as u32,
            name,
            params: self.slice(params),
            by_ref_return,
            return_type,
            uses: self.slice(uses),
            body,
            attributes: self.slice(attributes.unwrap_or_default()),
            is_static,
        })
    }

    /// `match`: PHP refuses a second `default` arm at compile time.
    pub fn match_expr(
        &self,
        pos: usize,
        subject: &'a Expr<'a>,
        arms: Vec<MatchArm<'a>>,
    ) -> ParseResult<'a, &'a Expr<'a>> {
        if let Some(second) = arms.iter().filter(|a| a.conds.is_none()).nth(1) {
            return fatal_error(
                second.pos as usize,
                "Match expressions may only contain one default arm",
            );
        }
        Ok(self.expr(
            pos,
            ExprKind::Match {
                subject,
                arms: self.slice(arms),
            },
        ))
    }

    /// A construct the grammar recognises but minizts does not implement.
    pub fn unsupported<T>(&self, pos: usize, what: &str) -> ParseResult<'a, T> {
        fatal_error(pos, format!("minizts does not support {what}"))
    }

    pub fn isset(&self, pos: usize, vars: Vec<&'a Expr<'a>>) -> ParseResult<'a, &'a Expr<'a>> {
        if vars.is_empty() {
            return user_error(pos, "syntax error, unexpected token \")\"");
        }
        Ok(self.expr(pos, ExprKind::Isset(self.slice(vars))))
    }

    pub fn ternary(
        &self,
        pos: usize,
        cond: &'a Expr<'a>,
        then: Option<&'a Expr<'a>>,
        els: &'a Expr<'a>,
    ) -> ParseResult<'a, &'a Expr<'a>> {
        let pos = (cond.pos as usize).min(pos);
        // PHP 8 refuses a nested ternary without parentheses when it
        // compiles it (only `a ?: b ?: c` means the same either way).
        if let ExprKind::Ternary { then: inner_then, .. } = cond.kind {
            if !self.is_parenthesized(cond) {
                let message = match (inner_then.is_some(), then.is_some()) {
                    (true, true) => "Unparenthesized `a ? b : c ? d : e` is not supported. Use either `(a ? b : c) ? d : e` or `a ? b : (c ? d : e)`",
                    (true, false) => "Unparenthesized `a ? b : c ?: d` is not supported. Use either `(a ? b : c) ?: d` or `a ? b : (c ?: d)`",
                    (false, true) => "Unparenthesized `a ?: b ? c : d` is not supported. Use either `(a ?: b) ? c : d` or `a ?: (b ? c : d)`",
                    (false, false) => "",
                };
                if !message.is_empty() {
                    return Ok(self.expr(pos, ExprKind::Refused(message)));
                }
            }
        }
        Ok(self.expr(pos, ExprKind::Ternary { cond, then, els }))
    }

    /// Builds `target op value`. When `target` is not itself something that
    /// can be assigned to, the assignment belongs to its right-most operand,
    /// as in PHP's grammar: `!$a = f()` is `!($a = f())`.
    pub fn assign(
        &self,
        pos: usize,
        target: &'a Expr<'a>,
        kind: AssignKind,
        value: &'a Expr<'a>,
    ) -> ParseResult<'a, &'a Expr<'a>> {
        self.no_globals_write(target)?;
        if let (AssignKind::Ref, ExprKind::Var("GLOBALS")) = (kind, &value.kind) {
            return fatal_error(value.pos as usize, "Cannot acquire reference to $GLOBALS");
        }
        if let ExprKind::Index {
            base: Expr {
                kind: ExprKind::Var("GLOBALS"),
                ..
            },
            index: None,
        } = target.kind
        {
            return fatal_error(target.pos as usize, "Cannot append to $GLOBALS");
        }
        // PHP's `variable`s (calls among them, refused when compiled) and,
        // for `=`, lists; never in parentheses.
        let writable = matches!(
            (&target.kind, kind),
            (
                ExprKind::Var(_)
                    | ExprKind::VarVar { .. }
                    | ExprKind::Index { .. }
                    | ExprKind::Call { .. }
                    | ExprKind::CallValue { .. }
                    | ExprKind::CallableFromName(_)
                    | ExprKind::CallableFromValue(_)
                    | ExprKind::CurlyIndex { .. }
                    | ExprKind::Prop { .. }
                    | ExprKind::StaticProp { .. }
                    | ExprKind::MethodCall { .. }
                    | ExprKind::StaticCall { .. }
                    | ExprKind::MethodCallable { .. }
                    | ExprKind::StaticCallable { .. },
                _
            ) | (
                ExprKind::Array(_, ArraySyntax::Short | ArraySyntax::List),
                AssignKind::Plain
            )
        );
        if writable && self.is_parenthesized(target) {
            return self.bad_assign(pos);
        }
        if writable {
            let pos = target.pos as usize;
            let kind = match kind {
                AssignKind::Plain => ExprKind::Assign { target, value },
                AssignKind::Ref => {
                    if !matches!(
                        value.kind,
                        ExprKind::Var(_)
                            | ExprKind::VarVar { .. }
                            | ExprKind::Index { .. }
                            | ExprKind::Call { .. }
                            | ExprKind::CallValue { .. }
                            | ExprKind::CallableFromName(_)
                            | ExprKind::CallableFromValue(_)
                            | ExprKind::CurlyIndex { .. }
                            | ExprKind::Prop { .. }
                            | ExprKind::StaticProp { .. }
                            | ExprKind::MethodCall { .. }
                            | ExprKind::StaticCall { .. }
                    ) {
                        return user_error(value.pos as usize, "Cannot assign reference to non referenceable value");
                    }
                    ExprKind::AssignRef { target, source: value }
                }
                AssignKind::Op(op) => ExprKind::AssignOp { op, target, value },
            };
            return Ok(self.expr(pos, kind));
        }
        if self.is_parenthesized(target) {
            return self.bad_assign(pos);
        }
        let moved = |inner: &'a Expr<'a>| self.assign(pos, inner, kind, value);
        let kind = match target.kind {
            ExprKind::Unary { op, expr } => ExprKind::Unary { op, expr: moved(expr)? },
            ExprKind::Cast { to, expr } => ExprKind::Cast { to, expr: moved(expr)? },
            ExprKind::Silence(expr) => ExprKind::Silence(moved(expr)?),
            ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
                op,
                lhs,
                rhs: moved(rhs)?,
            },
            ExprKind::Ternary { cond, then, els } => ExprKind::Ternary {
                cond,
                then,
                els: moved(els)?,
            },
            _ => return self.bad_assign(pos),
        };
        Ok(self.expr(target.pos as usize, kind))
    }

    fn bad_assign(&self, pos: usize) -> ParseResult<'a, &'a Expr<'a>> {
        // Report it at the `=`, as PHP does.
        let at = self.src[pos..].iter().position(|&c| c == b'=').map_or(pos, |i| pos + i);
        user_error(at, "syntax error, unexpected token \"=\"")
    }

    pub fn array_items(
        &self,
        mut items: Vec<Option<ArrayItem<'a>>>,
        last: Option<ArrayItem<'a>>,
    ) -> Vec<ArrayItem<'a>> {
        if last.is_some() {
            items.push(last);
        }
        items
            .into_iter()
            .map(|item| {
                item.unwrap_or(ArrayItem {
                    key: None,
                    value: None,
                    by_ref: false,
                    spread: false,
                })
            })
            .collect()
    }

    pub fn int_literal(&self, pos: usize, text: &str) -> ParseResult<'a, &'a Expr<'a>> {
        match parse_int(text) {
            Some(Number::Int(n)) => Ok(self.expr(pos, ExprKind::Int(n))),
            Some(Number::Float(f)) => Ok(self.expr(pos, ExprKind::Float(f))),
            None => user_error(pos, "Invalid numeric literal"),
        }
    }

    pub fn float_literal(&self, pos: usize, text: &str) -> &'a Expr<'a> {
        let clean: String = text.chars().filter(|&c| c != '_').collect();
        let f = clean.parse::<f64>().unwrap_or(0.0);
        self.expr(pos, ExprKind::Float(f))
    }

    pub fn single_quoted(&self, pos: usize, raw: &'a [u8]) -> &'a Expr<'a> {
        let s = if raw.contains(&b'\\') {
            let mut out = Vec::with_capacity(raw.len());
            let mut i = 0;
            while i < raw.len() {
                if raw[i] == b'\\' && matches!(raw.get(i + 1), Some(b'\\' | b'\'')) {
                    out.push(raw[i + 1]);
                    i += 2;
                } else {
                    out.push(raw[i]);
                    i += 1;
                }
            }
            self.arena.alloc_slice_copy(&out)
        } else {
            raw
        };
        self.expr(pos, ExprKind::Str(s))
    }

    /// A double-quoted string: resolves escapes and splits out the
    /// interpolated variables and `{$…}` expressions.
    pub fn double_quoted(&self, pos: usize, raw: &'a [u8]) -> ParseResult<'a, &'a Expr<'a>> {
        // The payload starts one byte after the opening quote, which a
        // `b` prefix may precede.
        let quote = if matches!(self.src.get(pos), Some(b'b' | b'B')) {
            pos + 1
        } else {
            pos
        };
        self.interpolated(pos, quote + 1, raw, None)
    }

    /// A heredoc or nowdoc: the closing marker's indentation (which the
    /// lexer has checked the body against) is removed from every line
    /// (PHP 7.3), then a heredoc is read as a double-quoted string whose
    /// `"` needs no escape, a nowdoc as it stands. Without interpolation it
    /// dates from its body's first line, as PHP's string token does.
    pub fn heredoc(&self, pos: usize, h: Heredoc<'a>) -> ParseResult<'a, &'a Expr<'a>> {
        let base = pos + h.body_offset as usize;
        let indent = h.indent.len();
        if !h.nowdoc {
            let e = self.interpolated(pos, base, h.body, Some(indent))?;
            return Ok(match e.kind {
                ExprKind::Str(s) => self.expr(base, ExprKind::Str(s)),
                _ => e,
            });
        }
        let mut out = Vec::with_capacity(h.body.len());
        let mut rest = h.body;
        while !rest.is_empty() {
            let line_len = rest
                .iter()
                .position(|&c| c == b'\n' || c == b'\r')
                .unwrap_or(rest.len());
            let newline = match &rest[line_len..] {
                [b'\r', b'\n', ..] => 2,
                [] => 0,
                _ => 1,
            };
            let line = &rest[..line_len];
            out.extend_from_slice(&line[leading_blanks(line).min(indent)..]);
            out.extend_from_slice(&rest[line_len..line_len + newline]);
            rest = &rest[line_len + newline..];
        }
        Ok(self.expr(base, ExprKind::Str(self.arena.alloc_slice_copy(&out))))
    }

    /// A string with escapes and interpolation whose text `raw` starts at
    /// `base` in the source: a double-quoted string, or a heredoc body
    /// (`dedent`: the indentation each of its lines loses).
    fn interpolated(
        &self,
        pos: usize,
        base: usize,
        raw: &'a [u8],
        dedent: Option<usize>,
    ) -> ParseResult<'a, &'a Expr<'a>> {
        let mut parts: Vec<InterpPart<'a>> = Vec::new();
        let mut lit: Vec<u8> = Vec::new();
        let mut i = 0;
        let mut line_start = dedent.is_some();
        while i < raw.len() {
            if line_start {
                line_start = false;
                i += leading_blanks(&raw[i..]).min(dedent.unwrap_or(0));
                if i >= raw.len() {
                    break;
                }
            }
            let c = raw[i];
            match c {
                // In a heredoc `\"` is two characters.
                b'\\' if dedent.is_some() && raw.get(i + 1) == Some(&b'"') => {
                    lit.push(c);
                    i += 1;
                }
                b'\\' if i + 1 < raw.len() => match unescape_double(raw, i, &mut lit) {
                    Ok(next) => i = next,
                    Err(message) => return user_error(base + i, message),
                },
                b'$' if raw.get(i + 1).is_some_and(|&c| is_name_start(c)) => {
                    self.flush_literal(&mut parts, &mut lit);
                    let (expr, next) = self.simple_interpolation(raw, base, i)?;
                    parts.push(InterpPart::Expr(expr));
                    i = next;
                }
                b'$' if raw.get(i + 1) == Some(&b'{') => {
                    // `${name}`: the form PHP 8.2 deprecates; still valid.
                    let close = interpolation_end(self.src, base + i + 2, &self.ends)
                        .filter(|&close| close < base + raw.len())
                        .ok_or(())
                        .or_else(|_| user_error(base + i, "syntax error, unexpected end of file"))?
                        - base;
                    let name = &raw[i + 2..close];
                    self.flush_literal(&mut parts, &mut lit);
                    let simple = !name.is_empty() && is_name_start(name[0]) && name.iter().all(|&c| is_name_char(c));
                    if simple {
                        let name = self.name(name);
                        parts.push(InterpPart::Expr(self.expr(base + i, ExprKind::Var(name))));
                    } else {
                        // `${name[expr]}` is `$name[expr]`; anything else,
                        // `${expr}`, is the variable named by the value.
                        let depth = self.interpolation_depth.get();
                        if depth >= MAX_DEPTH {
                            return fatal_error(base + i, too_deep());
                        }
                        self.interpolation_depth.set(depth + 1);
                        let tokens =
                            Lexer::fragment(self.src, base + i + 2, base + close, self.ends.clone()).map(lex_adapter);
                        let parsed = grammar::ExprParser::new().parse(self, tokens);
                        self.interpolation_depth.set(depth);
                        let e = parsed.map_err(|err| ParseError::User {
                            error: describe(err, &self.src[..base + close]),
                        })?;
                        let e = match e.kind {
                            ExprKind::Index {
                                base:
                                    Expr {
                                        kind: ExprKind::Const(n),
                                        pos,
                                    },
                                index,
                            } if !n.contains('\\') => {
                                let var = self.expr(*pos as usize, ExprKind::Var(n));
                                self.index(e.pos as usize, var, index)
                            }
                            _ => self.expr(base + i, ExprKind::VarVar { name: e, global: false }),
                        };
                        parts.push(InterpPart::Expr(e));
                    }
                    i = close + 1;
                }
                b'{' if raw.get(i + 1) == Some(&b'$') => {
                    // The lexer found this string's end the same way, so
                    // the brace is inside it; checked all the same.
                    let close = match interpolation_end(self.src, base + i + 1, &self.ends) {
                        Some(close) if close < base + raw.len() => close - base,
                        _ => return user_error(base + raw.len(), "syntax error, unexpected end of file"),
                    };
                    self.flush_literal(&mut parts, &mut lit);
                    // Each nesting level is a parse inside the one around
                    // it: bounded, as the nesting of the tree is.
                    let depth = self.interpolation_depth.get();
                    if depth >= MAX_DEPTH {
                        return fatal_error(base + i, too_deep());
                    }
                    self.interpolation_depth.set(depth + 1);
                    let tokens =
                        Lexer::fragment(self.src, base + i + 1, base + close, self.ends.clone()).map(lex_adapter);
                    let parsed = grammar::ExprParser::new().parse(self, tokens);
                    self.interpolation_depth.set(depth);
                    let expr = parsed.map_err(|err| ParseError::User {
                        error: describe(err, &self.src[..base + close]),
                    })?;
                    parts.push(InterpPart::Expr(expr));
                    i = close + 1;
                }
                _ => {
                    lit.push(c);
                    i += 1;
                    // `\n`, `\r\n` and a lone `\r` all end a line.
                    let newline = c == b'\n' || (c == b'\r' && raw.get(i) != Some(&b'\n'));
                    line_start = newline && dedent.is_some();
                }
            }
        }
        if parts.is_empty() {
            let s = self.arena.alloc_slice_copy(&lit);
            return Ok(self.expr(pos, ExprKind::Str(s)));
        }
        self.flush_literal(&mut parts, &mut lit);
        Ok(self.expr(pos, ExprKind::Interp(self.slice(parts))))
    }

    /// The key of `"$a[12]"` or `"$a[-12]"`: an int when the digits are a
    /// canonical one that fits, else the text as written (PHP's
    /// `T_NUM_STRING`, negated by `zend_negate_num_string`).
    fn offset_number(&self, digits: &'a [u8], negative: bool) -> ExprKind<'a> {
        let canonical = digits == b"0" || (digits[0] != b'0' && digits.iter().all(u8::is_ascii_digit));
        let int = canonical
            .then(|| std::str::from_utf8(digits).ok()?.parse::<i64>().ok())
            .flatten();
        match (int, negative) {
            (Some(0), true) => ExprKind::Str(b"-0"),
            (Some(n), true) => ExprKind::Int(-n),
            (Some(n), false) => ExprKind::Int(n),
            (None, false) => ExprKind::Str(digits),
            (None, true) => {
                let mut text = Vec::with_capacity(digits.len() + 1);
                text.push(b'-');
                text.extend_from_slice(digits);
                ExprKind::Str(self.arena.alloc_slice_copy(&text))
            }
        }
    }

    fn flush_literal(&self, parts: &mut Vec<InterpPart<'a>>, lit: &mut Vec<u8>) {
        if !lit.is_empty() {
            parts.push(InterpPart::Lit(self.arena.alloc_slice_copy(lit)));
            lit.clear();
        }
    }

    /// `$name`, `$name[key]`, `$name[$i]` or `$name[-1]` inside a string.
    fn simple_interpolation(&self, raw: &'a [u8], base: usize, start: usize) -> ParseResult<'a, (&'a Expr<'a>, usize)> {
        let mut i = start + 1;
        while i < raw.len() && is_name_char(raw[i]) {
            i += 1;
        }
        let name = self.name(&raw[start + 1..i]);
        let var = self.expr(base + start, ExprKind::Var(name));
        // `$obj->prop` and `$obj?->prop`: one property.
        let arrow = if raw[i..].starts_with(b"->") {
            Some((2, false))
        } else if raw[i..].starts_with(b"?->") {
            Some((3, true))
        } else {
            None
        };
        if let Some((len, nullsafe)) = arrow {
            let p = i + len;
            if raw.get(p).is_some_and(|&c| is_name_start(c)) {
                let mut j = p;
                while j < raw.len() && is_name_char(raw[j]) {
                    j += 1;
                }
                let prop = self.name(&raw[p..j]);
                let e = self.expr(
                    base + start,
                    ExprKind::Prop {
                        obj: var,
                        name: MemberName::Ident(prop),
                        nullsafe,
                    },
                );
                return Ok((e, j));
            }
        }
        if raw.get(i) != Some(&b'[') {
            return Ok((var, i));
        }
        // One level of `[…]`: a bare word is a string key, digits an int
        // key (a string if PHP would not read them as a canonical int).
        let key_start = i + 1;
        let mut j = key_start;
        let key = if raw.get(j) == Some(&b'$') && raw.get(j + 1).is_some_and(|&c| is_name_start(c)) {
            j += 1;
            while j < raw.len() && is_name_char(raw[j]) {
                j += 1;
            }
            let name = self.name(&raw[key_start + 1..j]);
            self.expr(base + key_start, ExprKind::Var(name))
        } else if raw.get(j).is_some_and(|c| c.is_ascii_digit())
            || (raw.get(j) == Some(&b'-') && raw.get(j + 1).is_some_and(|c| c.is_ascii_digit()))
        {
            let negative = raw[j] == b'-';
            j += negative as usize;
            let digits = &raw[j..j + offset_number_len(&raw[j..])];
            j += digits.len();
            self.expr(base + key_start, self.offset_number(digits, negative))
        } else if raw.get(j).is_some_and(|&c| is_name_start(c)) {
            while j < raw.len() && is_name_char(raw[j]) {
                j += 1;
            }
            self.expr(base + key_start, ExprKind::Str(&raw[key_start..j]))
        } else {
            return user_error(
                base + j,
                "syntax error, unexpected string content \"\", expecting \"-\" or identifier or variable or number",
            );
        };
        if raw.get(j) != Some(&b']') {
            return user_error(base + j, "syntax error, unexpected string content, expecting \"]\"");
        }
        Ok((self.index(base + start, var, Some(key)), j + 1))
    }
}

/// The length of the number PHP's lexer reads at the start of `s` as a
/// string offset inside a string: the longest of a decimal, hex, binary
/// or octal literal (with `_` separators).
fn offset_number_len(s: &[u8]) -> usize {
    let run = |from: usize, digit: fn(&u8) -> bool| {
        let mut i = from;
        if !s.get(i).is_some_and(digit) {
            return 0;
        }
        loop {
            while s.get(i).is_some_and(digit) {
                i += 1;
            }
            if s.get(i) == Some(&b'_') && s.get(i + 1).is_some_and(digit) {
                i += 1;
            } else {
                return i;
            }
        }
    };
    let decimal = run(0, u8::is_ascii_digit);
    let prefixed = match s {
        [b'0', b'x' | b'X', ..] => run(2, u8::is_ascii_hexdigit),
        [b'0', b'b' | b'B', ..] => run(2, |c| matches!(c, b'0' | b'1')),
        [b'0', b'o' | b'O', ..] => run(2, |c| matches!(c, b'0'..=b'7')),
        _ => 0,
    };
    decimal.max(prefixed)
}

/// How many spaces and tabs `line` starts with.
fn leading_blanks(line: &[u8]) -> usize {
    line.iter().take_while(|&&c| c == b' ' || c == b'\t').count()
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_name_char(c: u8) -> bool {
    is_name_start(c) || c.is_ascii_digit()
}

/// Resolves the escape at `raw[i]` (a backslash) into `out`; returns the
/// index after it, or PHP's parse error for a malformed `\u{…}`. Unknown
/// escapes keep their backslash, as in PHP.
fn unescape_double(raw: &[u8], i: usize, out: &mut Vec<u8>) -> Result<usize, &'static str> {
    let c = raw[i + 1];
    let simple = match c {
        b'n' => Some(b'\n'),
        b't' => Some(b'\t'),
        b'r' => Some(b'\r'),
        b'v' => Some(0x0b),
        b'e' => Some(0x1b),
        b'f' => Some(0x0c),
        b'\\' => Some(b'\\'),
        b'$' => Some(b'$'),
        b'"' => Some(b'"'),
        _ => None,
    };
    if let Some(b) = simple {
        out.push(b);
        return Ok(i + 2);
    }
    if (b'0'..=b'7').contains(&c) {
        let mut j = i + 1;
        let mut v: u32 = 0;
        while j < raw.len() && j < i + 4 && (b'0'..=b'7').contains(&raw[j]) {
            v = v * 8 + (raw[j] - b'0') as u32;
            j += 1;
        }
        out.push(v as u8);
        return Ok(j);
    }
    if c == b'x' && raw.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit()) {
        let mut j = i + 2;
        let mut v: u32 = 0;
        while j < raw.len() && j < i + 4 && raw[j].is_ascii_hexdigit() {
            v = v * 16 + (raw[j] as char).to_digit(16).unwrap_or(0);
            j += 1;
        }
        out.push(v as u8);
        return Ok(j);
    }
    if c == b'u' && raw.get(i + 2) == Some(&b'{') {
        let digits = raw[i + 3..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        if digits == 0 || raw.get(i + 3 + digits) != Some(&b'}') {
            return Err("Invalid UTF-8 codepoint escape sequence");
        }
        let hex = &raw[i + 3..i + 3 + digits];
        let significant = &hex[hex.iter().take_while(|&&c| c == b'0').count()..];
        let code = if significant.len() > 6 {
            u32::MAX
        } else {
            significant
                .iter()
                .fold(0u32, |v, &c| v * 16 + (c as char).to_digit(16).unwrap_or(0))
        };
        if code > 0x10FFFF {
            return Err("Invalid UTF-8 codepoint escape sequence: Codepoint too large");
        }
        push_utf8(out, code);
        return Ok(i + 3 + digits + 1);
    }
    if c == b'{' {
        // `\{` is not an escape, but it keeps the `{` from starting `{$…}`.
        out.extend_from_slice(b"\\{");
        return Ok(i + 2);
    }
    out.push(b'\\');
    Ok(i + 1)
}

/// UTF-8 for code point `c`, surrogates included (PHP encodes them as it
/// would any other code point).
fn push_utf8(out: &mut Vec<u8>, c: u32) {
    match c {
        0..=0x7F => out.push(c as u8),
        0x80..=0x7FF => out.extend_from_slice(&[0xC0 | (c >> 6) as u8, 0x80 | (c & 0x3F) as u8]),
        0x800..=0xFFFF => out.extend_from_slice(&[
            0xE0 | (c >> 12) as u8,
            0x80 | ((c >> 6) & 0x3F) as u8,
            0x80 | (c & 0x3F) as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xF0 | (c >> 18) as u8,
            0x80 | ((c >> 12) & 0x3F) as u8,
            0x80 | ((c >> 6) & 0x3F) as u8,
            0x80 | (c & 0x3F) as u8,
        ]),
    }
}

/// An integer literal's value; too big for an int, it is a float (as PHP).
pub enum Number {
    Int(i64),
    Float(f64),
}

/// Reads a decimal, hex, octal or binary integer literal (with `_`).
pub fn parse_int(text: &str) -> Option<Number> {
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    let (digits, radix) = if let Some(h) = clean.strip_prefix("0x").or_else(|| clean.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = clean.strip_prefix("0b").or_else(|| clean.strip_prefix("0B")) {
        (b, 2)
    } else if let Some(o) = clean.strip_prefix("0o").or_else(|| clean.strip_prefix("0O")) {
        (o, 8)
    } else if clean.len() > 1 && clean.starts_with('0') {
        (&clean[1..], 8)
    } else {
        (clean.as_str(), 10)
    };
    if !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    match i64::from_str_radix(digits, radix) {
        Ok(n) => Some(Number::Int(n)),
        Err(_) => {
            // Overflow: the float nearest the value.
            let mut f = 0.0f64;
            for c in digits.chars() {
                f = f * radix as f64 + c.to_digit(radix)? as f64;
            }
            if radix == 10 {
                f = digits.parse::<f64>().ok()?;
            }
            Some(Number::Float(f))
        }
    }
}
