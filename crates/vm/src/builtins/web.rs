//! Web-facing string functions: strip_tags, parse_url and the URL
//! encoders, http_build_query, parse_str, and sscanf (PHP's
//! ext/standard/string.c, url.c, http.c, php_variables.c and scanf.c).

mod scanf;
mod strip_tags;
mod url;

use scanf::sscanf;
use strip_tags::strip_tags;
use url::{http_build_query, parse_str, parse_url, rawurldecode, rawurlencode, urldecode, urlencode};

// sscanf's variables are by reference: bits 2 to 30 for the compiler,
// bit 31 for the rest.
crate::builtin_table! {
    "strip_tags", ["string", "allowed_tags"], 1, 0, strip_tags;
    "parse_url", ["url", "component"], 1, 0, parse_url;
    "urlencode", ["string"], 1, 0, urlencode;
    "urldecode", ["string"], 1, 0, urldecode;
    "rawurlencode", ["string"], 1, 0, rawurlencode;
    "rawurldecode", ["string"], 1, 0, rawurldecode;
    "http_build_query", ["data", "numeric_prefix", "arg_separator", "encoding_type"], 1, 0, http_build_query;
    "parse_str", ["string", "result"], 2, 0b10, parse_str;
    "sscanf", ["string", "format", "...vars"], 2, 0xffff_fffc, sscanf;
}
