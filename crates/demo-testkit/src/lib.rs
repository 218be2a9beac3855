#[macro_export]
macro_rules! contract_tests {
    ($n:literal) => {};
}
