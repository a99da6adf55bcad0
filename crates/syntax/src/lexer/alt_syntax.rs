//! PHP's alternative syntax for control structures (`if (…): … elseif
//! (…): … else: … endif;`, `while (…): … endwhile;`, `for`, `foreach`,
//! `switch` and `declare` likewise), rewritten in the token stream to the braced form the
//! grammar reads.
//!
//! A construct's `:` is the token right after the `)` that closes its
//! head; it becomes `{`, and the matching `else`, `elseif` and `endX` close
//! the block with a `}` (and open the next one). An `else` or `elseif`
//! belongs to the alternative `if` only when it stands directly in that
//! `if`'s block and is itself followed by `:` (after its condition), so a
//! braceless `if … else` nested in the block keeps its own `else`. Doing
//! this in the grammar instead would put the dangling-`else` conflict of
//! nested braceless `if`s into the LR(1) tables twice.

use std::collections::VecDeque;

use crate::lexer::Token;

type Item<'s, E> = Result<(usize, Token<'s>, usize), E>;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    If,
    While,
    For,
    Foreach,
    Switch,
    Declare,
}

/// The token stream with alternative-syntax blocks turned into braces.
pub struct AltSyntax<'s, E, I: Iterator<Item = Item<'s, E>>> {
    inner: I,
    /// Makes the error for the end of the file inside an open block, from
    /// what PHP's parser expects there.
    unclosed: fn(usize, &'static str) -> E,
    /// Where the file ends.
    eof: usize,
    /// Tokens read ahead and not yet given out, in order.
    pending: VecDeque<Item<'s, E>>,
    /// Open alternative blocks, innermost last, with the bracket depth of
    /// their bodies.
    open: Vec<(Kind, usize)>,
    /// Brackets (`(`, `[`, `{`) open in the stream given out so far.
    depth: usize,
    /// The next `if` is an `elseif` already rewritten.
    elseif: bool,
}

impl<'s, E, I: Iterator<Item = Item<'s, E>>> AltSyntax<'s, E, I> {
    pub fn new(inner: I, eof: usize, unclosed: fn(usize, &'static str) -> E) -> Self {
        AltSyntax {
            inner,
            unclosed,
            eof,
            pending: VecDeque::new(),
            open: Vec::new(),
            depth: 0,
            elseif: false,
        }
    }

    /// The `n`th token not yet given out, reading ahead as needed; `None`
    /// at the end or at an error.
    fn peek(&mut self, n: usize) -> Option<&Token<'s>> {
        while self.pending.len() <= n {
            let item = self.inner.next()?;
            self.pending.push_back(item);
        }
        match &self.pending[n] {
            Ok((_, t, _)) => Some(t),
            Err(_) => None,
        }
    }

    /// Where the `:` of a construct whose head is a parenthesised list
    /// starting at read-ahead index `at` is: just after the `)` matching
    /// that `(`, if it is there.
    fn colon_after_head(&mut self, at: usize) -> Option<usize> {
        if !matches!(self.peek(at), Some(Token::LParen)) {
            return None;
        }
        let mut level = 0usize;
        let mut i = at;
        loop {
            match self.peek(i)? {
                Token::LParen | Token::LBracket | Token::LBrace => level += 1,
                Token::RParen | Token::RBracket | Token::RBrace => {
                    level -= 1;
                    if level == 0 {
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        matches!(self.peek(i + 1)?, Token::Colon).then_some(i + 1)
    }

    /// Turns the read-ahead `:` at `i` into `{`.
    fn open_brace(&mut self, i: usize) {
        if let Some(Ok((_, t, _))) = self.pending.get_mut(i) {
            *t = Token::LBrace;
        }
    }

    fn at_block_of(&self, kind: Kind) -> bool {
        self.open.last().is_some_and(|&(k, d)| k == kind && d == self.depth)
    }

    fn take(&mut self) -> Option<Item<'s, E>> {
        self.pending.pop_front().or_else(|| self.inner.next())
    }

    /// Gives out `item`, keeping the bracket depth.
    fn give(&mut self, item: Item<'s, E>) -> Option<Item<'s, E>> {
        if let Ok((_, t, _)) = &item {
            match t {
                Token::LParen | Token::LBracket | Token::AttributeStart | Token::LBrace => self.depth += 1,
                Token::RParen | Token::RBracket | Token::RBrace => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        Some(item)
    }

    /// A `}` at `pos`, given out before the token there.
    fn close_before(&mut self, item: Item<'s, E>, pos: usize) -> Option<Item<'s, E>> {
        self.pending.push_front(item);
        self.give(Ok((pos, Token::RBrace, pos)))
    }
}

impl<'s, E, I: Iterator<Item = Item<'s, E>>> Iterator for AltSyntax<'s, E, I> {
    type Item = Item<'s, E>;

    fn next(&mut self) -> Option<Item<'s, E>> {
        let Some(item) = self.take() else {
            // The end of the file inside a block: PHP's message, once.
            let (kind, _) = self.open.pop()?;
            self.open.clear();
            return Some(Err((self.unclosed)(
                self.eof,
                match kind {
                    Kind::If => "\"elseif\" or \"else\" or \"endif\"",
                    Kind::While => "\"endwhile\"",
                    Kind::For => "\"endfor\"",
                    Kind::Foreach => "\"endforeach\"",
                    Kind::Switch => "\"case\" or \"default\" or \"endswitch\"",
                    Kind::Declare => "\"enddeclare\"",
                },
            )));
        };
        let Ok((start, tok, _)) = &item else {
            return Some(item);
        };
        let start = *start;
        let head = match tok {
            Token::If if std::mem::take(&mut self.elseif) => None,
            Token::If => Some(Kind::If),
            Token::While => Some(Kind::While),
            Token::For => Some(Kind::For),
            Token::Foreach => Some(Kind::Foreach),
            Token::Switch => Some(Kind::Switch),
            Token::Declare => Some(Kind::Declare),
            Token::Else if self.at_block_of(Kind::If) => {
                match self.peek(0) {
                    Some(Token::Colon) => {
                        self.open_brace(0);
                        return self.close_before(item, start);
                    }
                    Some(Token::If) => {
                        if let Some(colon) = self.colon_after_head(1) {
                            self.open_brace(colon);
                            self.elseif = true;
                            return self.close_before(item, start);
                        }
                    }
                    _ => {}
                }
                None
            }
            Token::EndIf
            | Token::EndWhile
            | Token::EndFor
            | Token::EndForeach
            | Token::EndSwitch
            | Token::EndDeclare => {
                let kind = match tok {
                    Token::EndIf => Kind::If,
                    Token::EndWhile => Kind::While,
                    Token::EndFor => Kind::For,
                    Token::EndForeach => Kind::Foreach,
                    Token::EndSwitch => Kind::Switch,
                    _ => Kind::Declare,
                };
                if self.at_block_of(kind) {
                    self.open.pop();
                    let mut end = item.as_ref().map_or(start, |t| t.2);
                    // `endif;` closes the block as `}` does; its `;` is part
                    // of the closer, not an empty statement after it.
                    if matches!(self.peek(0), Some(Token::Semicolon)) {
                        if let Some(Ok((_, _, semi_end))) = self.pending.pop_front() {
                            end = semi_end;
                        }
                    }
                    return self.give(Ok((start, Token::RBrace, end)));
                }
                None
            }
            _ => None,
        };
        if let Some(kind) = head {
            if let Some(colon) = self.colon_after_head(0) {
                self.open_brace(colon);
                // The body's depth: the `{` about to open on top of this one.
                self.open.push((kind, self.depth + 1));
            }
        }
        self.give(item)
    }
}
