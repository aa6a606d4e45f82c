//! Tick labels: the C `printf` conversions that ArrayFire's `set_axes_label_format` takes
//! (`"%4.1f"` by default), for one number. Written here because the format string is chosen
//! at run time and Rust's `format!` takes its format at compile time.

/// Formats `v` with a format string holding one conversion among `%f`, `%e`, `%g`, `%d` and
/// `%i` (with optional flags `-`, `+`, `0`, space, a width and a precision) and any literal
/// text around it; `%%` is a literal percent sign. Text with no conversion is returned as it
/// is, and an unknown conversion is kept as written.
pub(super) fn format_number(fmt: &str, v: f64) -> String {
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut spec = String::from("%");
        let (mut left, mut plus, mut zero, mut space) = (false, false, false, false);
        while let Some(&f) = chars.peek() {
            match f {
                '-' => left = true,
                '+' => plus = true,
                '0' => zero = true,
                ' ' => space = true,
                _ => break,
            }
            spec.push(f);
            chars.next();
        }
        let mut width = 0usize;
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            width = width * 10 + d as usize;
            spec.push(chars.next().unwrap_or('0'));
        }
        let mut precision = None;
        if chars.peek() == Some(&'.') {
            spec.push('.');
            chars.next();
            let mut p = 0usize;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                p = p * 10 + d as usize;
                spec.push(chars.next().unwrap_or('0'));
            }
            precision = Some(p);
        }
        let conv = chars.next();
        let body = match conv {
            Some('f') | Some('F') => fixed(v, precision.unwrap_or(6)),
            Some('e') | Some('E') => exponent(v, precision.unwrap_or(6)),
            Some('g') | Some('G') => general(v, precision.unwrap_or(6)),
            Some('d') | Some('i') => fixed(v.round(), 0),
            other => {
                out.push_str(&spec);
                if let Some(o) = other {
                    out.push(o);
                }
                continue;
            }
        };
        let body = match conv {
            Some('E') | Some('G') => body.to_uppercase(),
            _ => body,
        };
        let negative = body.starts_with('-');
        let digits = body.trim_start_matches('-');
        let sign = if negative {
            "-"
        } else if plus {
            "+"
        } else if space {
            " "
        } else {
            ""
        };
        let len = sign.len() + digits.len();
        let pad = width.saturating_sub(len);
        if left {
            out.push_str(sign);
            out.push_str(digits);
            out.push_str(&" ".repeat(pad));
        } else if zero && v.is_finite() {
            out.push_str(sign);
            out.push_str(&"0".repeat(pad));
            out.push_str(digits);
        } else {
            out.push_str(&" ".repeat(pad));
            out.push_str(sign);
            out.push_str(digits);
        }
    }
    out
}

fn fixed(v: f64, precision: usize) -> String {
    if !v.is_finite() {
        return non_finite(v);
    }
    let s = format!("{v:.precision$}");
    // C prints -0.0 rounded to zero as "-0.0"; a tick label is clearer without the sign.
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

fn exponent(v: f64, precision: usize) -> String {
    if !v.is_finite() {
        return non_finite(v);
    }
    let s = format!("{v:.precision$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

fn general(v: f64, precision: usize) -> String {
    if !v.is_finite() {
        return non_finite(v);
    }
    let p = precision.max(1);
    if v == 0.0 {
        return "0".to_string();
    }
    let e = format!("{v:.prec$e}", prec = p - 1);
    let x: i32 = e.split_once('e').map_or(0, |(_, x)| x.parse().unwrap_or(0));
    let s = if x < -4 || x >= p as i32 {
        exponent(v, p - 1)
    } else {
        fixed(v, (p as i32 - 1 - x).max(0) as usize)
    };
    strip_zeros(&s)
}

/// Removes trailing zeros of the fraction (and a trailing point), as `%g` does.
fn strip_zeros(s: &str) -> String {
    let (num, exp) = match s.find('e') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    if !num.contains('.') {
        return s.to_string();
    }
    let num = num.trim_end_matches('0').trim_end_matches('.');
    format!("{num}{exp}")
}

fn non_finite(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v > 0.0 {
        "inf".into()
    } else {
        "-inf".into()
    }
}

#[cfg(test)]
mod tests {
    use super::format_number as f;

    #[test]
    fn printf_conversions() {
        assert_eq!(f("%4.1f", 2.25), " 2.2");
        assert_eq!(f("%4.1f", -12.5), "-12.5");
        assert_eq!(f("%.2f s", 0.5), "0.50 s");
        assert_eq!(f("%d", 41.6), "42");
        assert_eq!(f("%05.1f", 3.0), "003.0");
        assert_eq!(f("%-5.1f|", 3.0), "3.0  |");
        assert_eq!(f("%+.0f", 3.0), "+3");
        assert_eq!(f("%.2e", 12345.0), "1.23e+04");
        assert_eq!(f("%g", 0.0001), "0.0001");
        assert_eq!(f("%g", 1234567.0), "1.23457e+06");
        assert_eq!(f("%g", 2.5), "2.5");
        assert_eq!(f("%%%.0f", 5.0), "%5");
        assert_eq!(f("x", 1.0), "x");
        assert_eq!(f("%.1f", -0.01), "0.0");
    }
}
