fn main() {
    let path = std::env::args().nth(1).unwrap();
    let src = std::fs::read(path).unwrap();
    let arena = bumpalo::Bump::new();
    match minizts_syntax::parse(&arena, &src) {
        Ok(s) => print!("{}", minizts_syntax::ast::dump::script(&s)),
        Err(e) => println!("{e:?}"),
    }
}
