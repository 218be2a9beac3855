use std::time::Duration;

use crate::ApiError;

/// The largest `?ms=` a work route accepts.
pub const MAX_SLEEP_MS: u64 = 10_000;

/// How long one request to a work route sleeps (or, on a CPU route, computes): the server's
/// `--sleep-ms`, or the request's valid `?ms=`. With the `axum` or `actix` feature it is also
/// a request extractor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sleep(pub Duration);

/// Reads the sleep from a request's query string (the `?ms=` rule of `docs/contract.md`):
/// `ms` must appear at most once, as a whole number of milliseconds in `0..=10000`; without
/// it, `default`. Other parameters are ignored, as FastAPI ignores them.
pub fn parse_sleep(query: Option<&str>, default: Duration) -> Result<Duration, ApiError> {
    let mut values = form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .filter(|(key, _)| key == "ms")
        .map(|(_, value)| value);
    let Some(value) = values.next() else {
        return Ok(default);
    };
    if values.next().is_some() {
        return Err(ApiError::bad_request("`ms` may be given only once"));
    }
    match value.parse::<u64>() {
        Ok(ms) if ms <= MAX_SLEEP_MS => Ok(Duration::from_millis(ms)),
        _ => Err(ApiError::bad_request(format!(
            "`ms` must be a whole number of milliseconds from 0 to {MAX_SLEEP_MS}, got {value:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULT: Duration = Duration::from_millis(500);

    #[test]
    fn no_ms_means_the_default() {
        assert_eq!(parse_sleep(None, DEFAULT).unwrap(), DEFAULT);
        assert_eq!(parse_sleep(Some(""), DEFAULT).unwrap(), DEFAULT);
        assert_eq!(parse_sleep(Some("other=1"), DEFAULT).unwrap(), DEFAULT);
    }

    #[test]
    fn valid_ms_overrides_the_default() {
        for (query, ms) in [("ms=0", 0), ("ms=10000", 10_000), ("a=b&ms=25", 25)] {
            assert_eq!(
                parse_sleep(Some(query), DEFAULT).unwrap(),
                Duration::from_millis(ms),
                "{query}"
            );
        }
    }

    #[test]
    fn invalid_ms_is_a_400_that_says_why() {
        for query in [
            "ms=",
            "ms=abc",
            "ms=-1",
            "ms=10001",
            "ms=1.5",
            "ms=%20",
            "ms=99999999999999999999",
        ] {
            let error = parse_sleep(Some(query), DEFAULT).unwrap_err();
            assert_eq!(error.status, 400, "{query}");
            assert!(
                error.error.contains("0 to 10000"),
                "{query}: {}",
                error.error
            );
        }
    }

    #[test]
    fn repeated_ms_is_a_400() {
        let error = parse_sleep(Some("ms=1&ms=1"), DEFAULT).unwrap_err();
        assert_eq!(error.status, 400);
        assert!(error.error.contains("only once"), "{}", error.error);
    }
}
