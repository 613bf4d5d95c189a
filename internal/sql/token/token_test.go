package token

import (
	"sort"
	"strings"
	"testing"
)

func TestKeywordTable(t *testing.T) {
	names := make([]string, 0)
	for _, k := range Keywords() {
		if !k.IsKeyword() || k.IsOperator() || k.IsLiteral() {
			t.Fatalf("%v misclassified", k)
		}
		name := k.String()
		if name != strings.ToUpper(name) {
			t.Fatalf("keyword %q not upper case", name)
		}
		if got := Lookup(strings.ToLower(name)); got != k {
			t.Fatalf("Lookup(%q) = %v, want %v", strings.ToLower(name), got, k)
		}
		names = append(names, name)
	}
	if !sort.StringsAreSorted(names) {
		t.Fatal("keywordNames is not sorted; the constants and the names are out of step")
	}
	if Lookup("balances") != IDENT || Lookup("SELECT") != IDENT {
		t.Fatal("Lookup takes lower-case words only and returns IDENT for the rest")
	}
}

func TestClasses(t *testing.T) {
	if !SELECT.IsReserved() || COMMIT.IsReserved() || TIMESTAMP.IsReserved() || MODE.IsReserved() {
		t.Fatal("reserved set wrong")
	}
	if TYPECAST.String() != "::" || NE.String() != "<>" || IDENT.String() != "identifier" {
		t.Fatal("operator spelling wrong")
	}
	if !NUMBER.IsLiteral() || !COMMA.IsOperator() || Token(250).String() != "token(250)" {
		t.Fatal("classes wrong")
	}
}
