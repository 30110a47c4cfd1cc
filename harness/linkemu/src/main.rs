fn main() {
    eprintln!("linkemu: not built yet");
    std::process::exit(2);
}
