fn main() {
    lalrpop::process_root().expect("grammar.lalrpop failed to generate");
}
