// ddb_interop.js - interoperability with the original system's client: the
// AWS SDK for JavaScript v3 reads a product item our server wrote and checks
// the original's attribute names and types, then writes a product in the
// original's layout (hash and signature computed by the documented rules,
// API.md §3.3/§3.4; no events) for the caller to verify through our API.
//
//   node ddb_interop.js ENDPOINT TABLE OUR_PRODUCT_ID BRAND_ID BRAND_NAME SECRET NEW_ID CODE
//
// Prints PASS:/FAIL: lines; exit status 1 when any check failed.
'use strict';
const crypto = require('crypto');
const {
  DynamoDBClient,
  GetItemCommand,
  TransactWriteItemsCommand,
} = require('@aws-sdk/client-dynamodb');

const [endpoint, table, ourId, brandId, brandName, secret, newId, code] = process.argv.slice(2);
const client = new DynamoDBClient({
  endpoint,
  region: process.env.AWS_REGION || 'us-east-1',
  credentials: { accessKeyId: 'sdkinterop', secretAccessKey: 'sdkinterop' },
});
let fails = 0;
function check(name, ok, detail) {
  if (ok) console.log('PASS: ' + name);
  else {
    fails++;
    console.log('FAIL: ' + name + (detail ? ' (' + detail + ')' : ''));
  }
}
const typeOf = (av) => (av ? Object.keys(av)[0] : 'absent');

async function main() {
  // 1. Our item, read raw: names and DynamoDB types as the original wrote them.
  const got = await client.send(
    new GetItemCommand({
      TableName: table,
      Key: { PK: { S: 'PRODUCT#' + ourId }, SK: { S: 'META' } },
      ConsistentRead: true,
    })
  );
  const it = got.Item || {};
  const want = {
    productId: 'S', brandId: 'S', brandName: 'S', name: 'S', sku: 'S', verificationCode: 'S',
    hash: 'S', signature: 'S', status: 'S', metadata: 'M', createdAt: 'S', updatedAt: 'S',
    scanCount: 'N', GSI1PK: 'S', GSI1SK: 'S',
  };
  const bad = Object.entries(want).filter(([k, t]) => typeOf(it[k]) !== t);
  check('sdk reads our product with the original attribute types', got.Item && bad.length === 0,
    JSON.stringify(bad.map(([k, t]) => k + ':' + typeOf(it[k]) + '!=' + t)));
  check('sdk: keys and index keys', it.PK && it.PK.S === 'PRODUCT#' + ourId &&
    it.GSI1PK && it.GSI1PK.S === 'BRAND#' + brandId && it.GSI1SK && it.GSI1SK.S.startsWith('PRODUCT#'));
  const meta = it.metadata ? it.metadata.M : {};
  check('sdk: metadata is a native map with native numbers and nested maps',
    meta.origin && meta.origin.S === 'c' && meta.size && meta.size.N === '42' &&
    meta.nested && meta.nested.M && meta.nested.M.b && meta.nested.M.b.BOOL === true);
  check('sdk: metadataCanonical holds the canonical text',
    it.metadataCanonical && it.metadataCanonical.S === '{"z":1,"origin":"c","size":42,"nested":{"b":true,"a":null}}',
    it.metadataCanonical && it.metadataCanonical.S);

  // 2. A product written by the SDK in the original's layout.
  const createdAt = new Date().toISOString();
  const metadata = { edition: 'sdk' };
  const canon = JSON.stringify({ productId: newId, brandId, name: 'SDK Written', sku: 'SDK-1', metadata, createdAt });
  const hash = crypto.createHash('sha256').update(canon).digest('hex');
  const signature = crypto.createHmac('sha256', secret).update(hash).digest('hex');
  const product = {
    PK: { S: 'PRODUCT#' + newId }, SK: { S: 'META' },
    GSI1PK: { S: 'BRAND#' + brandId }, GSI1SK: { S: 'PRODUCT#' + createdAt },
    productId: { S: newId }, brandId: { S: brandId }, brandName: { S: brandName },
    name: { S: 'SDK Written' }, sku: { S: 'SDK-1' }, category: { NULL: true },
    description: { NULL: true }, imageUrl: { NULL: true }, verificationCode: { S: code },
    hash: { S: hash }, signature: { S: signature }, status: { S: 'active' },
    metadata: { M: { edition: { S: 'sdk' } } }, createdAt: { S: createdAt },
    updatedAt: { S: createdAt }, scanCount: { N: '0' },
  };
  await client.send(
    new TransactWriteItemsCommand({
      TransactItems: [
        { Put: { TableName: table, Item: product } },
        {
          Put: {
            TableName: table,
            Item: {
              PK: { S: 'VERIFY#' + code }, SK: { S: 'META' }, GSI1PK: { S: 'VERIFY#' + code },
              GSI1SK: { S: 'META' }, productId: { S: newId }, brandId: { S: brandId },
            },
          },
        },
      ],
    })
  );
  check('sdk wrote a product in the original layout', true);
  console.log('HASH ' + hash);
}

main()
  .catch((e) => {
    fails++;
    console.log('FAIL: sdk error ' + (e && e.name) + ': ' + (e && e.message));
  })
  .finally(() => process.exit(fails ? 1 : 0));
