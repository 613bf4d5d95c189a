package main

// The workload of issue 6 item 2: balances keyed by (chain_id, address,
// token) over 4 chains and 20 tokens, every write carrying both attribute
// groups of the seed's schema (holding: VALID BY balance_index REVISION BY
// balance_version; activity: VALID BY activity_index). The stream is a pure
// function of (scale, seed): the same flags give the same rows, batch for
// batch, on every system and every run.

// Scale is one row of the table of sizes.
type Scale struct {
	Name     string
	Keys     int // K
	Versions int // V: rows delivered in all, re-deliveries included
}

// Scales are the sizes the issue names, and tiny for a quick look.
var Scales = map[string]Scale{
	"tiny":   {"tiny", 10_000, 100_000},
	"small":  {"small", 100_000, 1_000_000},
	"medium": {"medium", 1_000_000, 10_000_000},
	"full":   {"full", 5_000_000, 50_000_000},
}

const (
	chains     = 4
	batchRows  = 1000
	latePct    = 30 // of all rows: an index below one already delivered for the key
	redeliver  = 2  // of all rows: an exact copy of a row already delivered
	revisePct  = 5  // of versions: same balance_index as the one before, higher balance_version
	perAddress = 8  // keys (chain, token pairs) per address
	indexStep  = 10 // balance_index distance between successive positions of a key
	baseMillis = 1_790_000_000_000
)

// tokens are the 20 token symbols.
var tokens = [20]string{
	"USDC", "USDT", "DAI", "WETH", "WBTC", "LINK", "UNI", "AAVE", "MKR", "CRV",
	"LDO", "ARB", "OP", "MATIC", "SNX", "COMP", "GRT", "ENS", "RPL", "BAL",
}

// Row is one delivered write: the key and both groups' columns.
type Row struct {
	Key       int32 // key id in [0, K)
	Index     uint64
	Version   uint64
	Amount    uint64 // < 10^12, so sums over 5 M keys fit in int64 (SQLite's widest exact type)
	UpdatedMs int64  // updated_at, milliseconds since the epoch
	Transfers uint64 // transfer_count
	ActIndex  uint64 // activity_index: balance_index*100 + balance_version, unique per key
	Late      bool   // arrived after a greater version of its key
	Repeat    bool   // an exact re-delivery
}

// KeyOf returns key id k's (chain_id, address, token). Each address holds
// perAddress distinct (chain, token) pairs; addresses are 0x and 40 hex
// digits, unique because the first 16 digits are a bijection of the
// address number.
func KeyOf(seed uint64, k int32) (chain int, address string, token string) {
	chain, hi, lo, token := keyParts(seed, k)
	var b [42]byte
	return chain, string(appendAddress(b[:0], hi, lo)), token
}

// keyParts returns key id k's chain, the two words its address is
// written from (appendAddress) and its token.
func keyParts(seed uint64, k int32) (chain int, hi, lo uint64, token string) {
	a := uint64(k) / perAddress
	j := uint64(k) % perAddress
	p := (mix(a^seed) + j*7) % (chains * uint64(len(tokens))) // 7 is coprime with 80: distinct pairs
	hi = mix(a + seed*0x9e3779b97f4a7c15)
	lo = mix(hi ^ 0x5bd1e995)
	return int(p%chains) + 1, hi, lo, tokens[p/chains]
}

// appendAddress appends the address "0x%016x%016x%08x" of hi, lo and
// mix(lo)'s low word, without fmt: the harness writes one per row of
// every batch, inside the timed ingest.
func appendAddress(b []byte, hi, lo uint64) []byte {
	const digits = "0123456789abcdef"
	b = append(b, '0', 'x')
	for _, w := range [...]struct {
		v uint64
		n int
	}{{hi, 16}, {lo, 16}, {uint64(uint32(mix(lo))), 8}} {
		for i := w.n - 1; i >= 0; i-- {
			b = append(b, digits[w.v>>(4*uint(i))&15])
		}
	}
	return b
}

// mix is splitmix64's finaliser: a bijection on uint64.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// rng is a small deterministic generator (splitmix64 stream).
type rng struct{ s uint64 }

func (r *rng) next() uint64 { r.s += 0x9e3779b97f4a7c15; return mix(r.s) }

// intn returns a value in [0, n).
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// keyState is what the generator remembers per key.
type keyState struct {
	slots   int32  // rows still to deliver for this key
	pos     int32  // versions made so far
	index   uint64 // ordering values of the last version made
	version uint64
	held    Row // a version made but held back (it will arrive late)
	hasHeld bool
	last    Row // the last row delivered, for exact re-deliveries
	hasLast bool
}

// Generator produces the batches of one workload.
type Generator struct {
	Scale Scale
	Seed  uint64
	keys  []keyState
	order []int32 // the key of each delivery slot
	next  int     // next slot
	r     rng
	Late  int // rows delivered late so far
	Rep   int // exact re-deliveries so far
	holds int // versions held back so far (delivered late or still pending)
}

// NewGenerator lays out the delivery slots: every key gets at least one
// row, the rest go to keys drawn uniformly.
func NewGenerator(sc Scale, seed uint64) *Generator {
	g := &Generator{Scale: sc, Seed: seed, keys: make([]keyState, sc.Keys), r: rng{seed*0x2545f4914f6cdd1d + 1}}
	g.order = make([]int32, sc.Versions)
	for i := range g.order {
		if i < sc.Keys {
			g.order[i] = int32(i)
		} else {
			g.order[i] = int32(g.r.intn(sc.Keys))
		}
	}
	// Shuffle so first writes of keys spread over the whole run.
	for i := len(g.order) - 1; i > 0; i-- {
		j := g.r.intn(i + 1)
		g.order[i], g.order[j] = g.order[j], g.order[i]
	}
	for _, k := range g.order {
		g.keys[k].slots++
	}
	return g
}

// Batches is the number of batches the workload has.
func (g *Generator) Batches() int { return (g.Scale.Versions + batchRows - 1) / batchRows }

// makeVersion makes key k's next version; step forces a new
// balance_index (no revision), so the version it overtakes is earlier by
// index, as the issue defines a late write.
func (g *Generator) makeVersion(k int32, step bool) Row {
	ks := &g.keys[k]
	if ks.pos == 0 {
		ks.index, ks.version = 1000+mix(uint64(k)^g.Seed)%1000, 1
	} else if !step && g.r.intn(100) < revisePct {
		ks.version++
	} else {
		ks.index += indexStep
		ks.version = 1
	}
	ks.pos++
	h := g.r.next()
	return Row{
		Key: k, Index: ks.index, Version: ks.version,
		Amount:    h % 1_000_000_000_000,
		UpdatedMs: baseMillis + int64(ks.index)*1000 + int64(ks.version),
		Transfers: uint64(ks.pos),
		ActIndex:  ks.index*100 + ks.version,
	}
}

// NextBatch appends the next batch's rows to buf[:0] and returns it; an
// empty result means the workload is done.
//
// A late row is a version held back while the key's next version (a
// greater balance_index) is delivered; it arrives at the key's next slot.
// A version is held back whenever the late share so far is below latePct
// and its key has a slot left (a key's last row cannot be overtaken);
// re-deliveries are drawn at random but held to redeliver of the rows so
// far. Both thresholds run against the running count, so every scale and
// seed gets the same shares; the late one runs 5 % of the stream ahead,
// because towards the end most keys have no slot left to be overtaken in.
func (g *Generator) NextBatch(buf []Row) []Row {
	buf = buf[:0]
	for len(buf) < batchRows && g.next < len(g.order) {
		k := g.order[g.next]
		g.next++
		ks := &g.keys[k]
		ks.slots--
		var row Row
		switch {
		case ks.hasHeld:
			row = ks.held
			row.Late = true
			ks.hasHeld = false
			g.Late++
		case ks.hasLast && g.Rep*100 < redeliver*g.next && g.r.intn(100) < 5:
			row = ks.last
			row.Repeat, row.Late = true, false
			g.Rep++
		case ks.slots >= 1 && g.holds*100 < latePct*min(len(g.order), g.next+len(g.order)/20):
			ks.held = g.makeVersion(k, false)
			ks.hasHeld = true
			g.holds++
			row = g.makeVersion(k, true)
		default:
			row = g.makeVersion(k, false)
		}
		ks.last, ks.hasLast = row, true
		buf = append(buf, row)
	}
	return buf
}
