//! PHP's number <-> string conversions (placeholder, being written).
