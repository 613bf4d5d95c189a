package objstore

import (
	_ "gocloud.dev/blob/fileblob" // file:// object stores (a local folder standing in for one)
	_ "gocloud.dev/blob/s3blob"   // s3:// (AWS S3 and S3-compatible servers)
)
