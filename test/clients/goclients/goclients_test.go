package goclients

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestAgainstPostgreSQL checks the two client programs against a real
// PostgreSQL when STRATA_PG_PEER_DSN names one (for example the server
// /work/shared/scripts/pg-peer.sh starts). The test that matters, against
// Strata, is test/clients.TestClients; this one only proves the programs
// themselves are right, so it runs only when asked.
func TestAgainstPostgreSQL(t *testing.T) {
	dsn := os.Getenv("STRATA_PG_PEER_DSN")
	if dsn == "" {
		t.Skip("STRATA_PG_PEER_DSN not set: no PostgreSQL peer to check the clients against")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := PGX(ctx, dsn, PG); err != nil {
		t.Error(err)
	}
	if err := PQ(ctx, dsn, PG); err != nil {
		t.Error(err)
	}
}
