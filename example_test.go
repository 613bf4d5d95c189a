package strata_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/strata-db/strata"
)

// Errors carry a SQLSTATE and the position of what is wrong.
func ExampleError() {
	dir, _ := os.MkdirTemp("", "strata-example")
	defer os.RemoveAll(dir)
	db, err := strata.Open(dir, strata.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	s := db.NewSession()
	ctx := context.Background()
	if _, err := s.Run(ctx, "CREATE TABLE small (k UINT8 NOT NULL, PRIMARY KEY (k))"); err != nil {
		log.Fatal(err)
	}
	_, err = s.Run(ctx, "INSERT INTO small VALUES (300)")
	e := err.(*strata.Error)
	fmt.Println(e.Code, e.Message)
	// Output:
	// 22003 column "k": value 300 is out of range for UINT8
}

// Exec runs a script; each statement's result carries its command tag and
// the commit it took.
func ExampleSession_Exec() {
	dir, _ := os.MkdirTemp("", "strata-example")
	defer os.RemoveAll(dir)
	db, err := strata.Open(dir, strata.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	results, err := db.NewSession().Exec(context.Background(), `
		CREATE TABLE kv (k STRING NOT NULL, v INT64, PRIMARY KEY (k));
		INSERT INTO kv VALUES ('a', 1), ('b', 2);
		UPSERT INTO kv VALUES ('a', 3);`)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Println(r.Tag, r.Commit)
	}
	// Output:
	// CREATE TABLE 1
	// INSERT 0 2 2
	// UPSERT 1 3
}
