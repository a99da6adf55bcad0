fn main() {
    let mut bad = 0;
    for path in std::env::args().skip(1) {
        let src = std::fs::read(&path).unwrap();
        let arena = bumpalo::Bump::new();
        match minizts_syntax::parse(&arena, &src) {
            Ok(s) => {
                if std::env::var("DUMP").is_ok() {
                    println!("{:#?}", s);
                }
            }
            Err(e) => {
                bad += 1;
                let li = minizts_syntax::LineIndex::new(&src);
                println!("{path}:{}: {}", li.line(e.pos as u32), e.message);
            }
        }
    }
    eprintln!("{bad} failed");
}
