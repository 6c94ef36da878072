package main

// The Go twin of scenario/template/funcs/helpers.ts: same names, same
// parameter types, same results and the same error/no-error behaviour.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"text/template"
)

func truth(v interface{}) bool {
	if v == nil {
		return false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool()
	case reflect.Int:
		return rv.Int() != 0
	case reflect.Float64:
		return rv.Float() != 0
	case reflect.String, reflect.Slice, reflect.Map:
		return rv.Len() > 0
	}
	return true
}

func kindName(v interface{}) string {
	if v == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%T", v)
}

func arith(name string, intOnly bool, iop func(a, b int) int, fop func(a, b float64) float64) func(a, b interface{}) (interface{}, error) {
	return func(a, b interface{}) (interface{}, error) {
		for _, v := range []interface{}{a, b} {
			switch v.(type) {
			case int:
			case float64:
				if intOnly {
					return nil, fmt.Errorf("%s: expected an integer, got %s", name, kindName(v))
				}
			default:
				return nil, fmt.Errorf("%s: expected a number, got %s", name, kindName(v))
			}
		}
		ai, aInt := a.(int)
		bi, bInt := b.(int)
		toF := func(v interface{}) float64 {
			if i, ok := v.(int); ok {
				return float64(i)
			}
			return v.(float64)
		}
		if (name == "div" || name == "mod") && toF(b) == 0 {
			return nil, fmt.Errorf("%s: division by zero", name)
		}
		if aInt && bInt {
			return iop(ai, bi), nil
		}
		return fop(toF(a), toF(b)), nil
	}
}

func indent(n int, s string) (string, error) {
	if n < 0 {
		return "", errors.New("indent: negative width")
	}
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad), nil
}

func sortedKeys(m map[string]interface{}) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func helperFuncs() template.FuncMap {
	return template.FuncMap{
		"upper":      strings.ToUpper,
		"lower":      strings.ToLower,
		"trim":       strings.TrimSpace,
		"trimPrefix": func(p, s string) string { return strings.TrimPrefix(s, p) },
		"trimSuffix": func(p, s string) string { return strings.TrimSuffix(s, p) },
		"replace":    func(o, n, s string) string { return strings.ReplaceAll(s, o, n) },
		"contains":   func(sub, s string) bool { return strings.Contains(s, sub) },
		"hasPrefix":  func(p, s string) bool { return strings.HasPrefix(s, p) },
		"hasSuffix":  func(p, s string) bool { return strings.HasSuffix(s, p) },
		"split": func(sep, s string) []interface{} {
			parts := strings.Split(s, sep)
			out := make([]interface{}, len(parts))
			for i, p := range parts {
				out[i] = p
			}
			return out
		},
		"join": func(sep string, list interface{}) (string, error) {
			l, ok := list.([]interface{})
			if !ok {
				return "", fmt.Errorf("join: expected a list, got %s", kindName(list))
			}
			parts := make([]string, len(l))
			for i, e := range l {
				parts[i] = fmt.Sprint(e)
			}
			return strings.Join(parts, sep), nil
		},
		"quote":   strconv.Quote,
		"squote":  func(s string) string { return "'" + s + "'" },
		"indent":  indent,
		"nindent": func(n int, s string) (string, error) { r, err := indent(n, s); return "\n" + r, err },
		"repeat": func(n int, s string) (string, error) {
			if n < 0 {
				return "", errors.New("repeat: negative count")
			}
			if n*len(s) > 1024*1024 {
				return "", errors.New("repeat: result too large")
			}
			return strings.Repeat(s, n), nil
		},
		"toJson": func(v interface{}) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
		"b64enc": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"b64dec": func(s string) (string, error) {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return "", errors.New("illegal base64 data")
			}
			return string(b), nil
		},
		"add": arith("add", false, func(a, b int) int { return a + b }, func(a, b float64) float64 { return a + b }),
		"sub": arith("sub", false, func(a, b int) int { return a - b }, func(a, b float64) float64 { return a - b }),
		"mul": arith("mul", false, func(a, b int) int { return a * b }, func(a, b float64) float64 { return a * b }),
		"div": arith("div", false, func(a, b int) int { return a / b }, func(a, b float64) float64 { return a / b }),
		"mod": arith("mod", true, func(a, b int) int { return a % b }, nil),
		"list": func(items ...interface{}) []interface{} {
			if items == nil {
				return []interface{}{}
			}
			return items
		},
		"dict": func(pairs ...interface{}) (map[string]interface{}, error) {
			if len(pairs)%2 != 0 {
				return nil, errors.New("dict: odd number of arguments")
			}
			out := map[string]interface{}{}
			for i := 0; i < len(pairs); i += 2 {
				k, ok := pairs[i].(string)
				if !ok {
					return nil, fmt.Errorf("dict: key %v is not a string", pairs[i])
				}
				out[k] = pairs[i+1]
			}
			return out, nil
		},
		"keys": func(m interface{}) ([]interface{}, error) {
			mm, ok := m.(map[string]interface{})
			if !ok {
				return nil, fmt.Errorf("keys: expected a map, got %s", kindName(m))
			}
			out := []interface{}{}
			for _, k := range sortedKeys(mm) {
				out = append(out, k)
			}
			return out, nil
		},
		"hasKey": func(m interface{}, k string) bool {
			mm, ok := m.(map[string]interface{})
			if !ok {
				return false
			}
			_, has := mm[k]
			return has
		},
		"default": func(d, v interface{}) interface{} {
			if truth(v) {
				return v
			}
			return d
		},
		"empty":    func(v interface{}) bool { return !truth(v) },
		"toString": func(v interface{}) string { return fmt.Sprint(v) },
	}
}
