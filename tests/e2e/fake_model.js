#!/usr/bin/env node
// tests/e2e/fake_model.js - a fake model server for classifier.sh and
// ddb_classifier.sh: OpenAI-compatible chat completions and Gemini
// generateContent.
//
//   node fake_model.js PORT_FILE LOG_FILE
//
// POST /ok/v1/chat/completions (and /ok/.../models/<m>:generateContent, in
// Gemini's envelope) answers a valid classification (severity "critical",
// attack_vector "tag_cloning", confidence 91); /fail/... answers 500.  Every
// request is appended to LOG_FILE as one JSON line (path, Authorization,
// x-goog-api-key, body), so a test counts the calls by counting lines.
'use strict';
const http = require('http');
const fs = require('fs');
const [portFile, logFile] = process.argv.slice(2);

const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        fs.appendFileSync(logFile, JSON.stringify({path: req.url, auth: req.headers.authorization || null,
            key: req.headers['x-goog-api-key'] || null, body}) + '\n');
        if (!req.url.startsWith('/ok/')) {
            res.writeHead(500, {'Content-Type': 'application/json'});
            res.end('{"error":"overloaded"}');
            return;
        }
        const answer = {
            severity: 'critical',
            attack_vector: 'tag_cloning',
            narrative: 'One tag was read on three continents within hours: a cloned tag.',
            recommended_actions: ['Revoke the tag', 'Alert the brand security team'],
            confidence: 91,
        };
        res.writeHead(200, {'Content-Type': 'application/json'});
        if (req.url.includes(':generateContent')) {
            res.end(JSON.stringify({candidates: [{content: {role: 'model', parts: [{text: JSON.stringify(answer)}]}}]}));
            return;
        }
        res.end(JSON.stringify({choices: [{message: {role: 'assistant', content: JSON.stringify(answer)}}]}));
    });
});
server.listen(0, '127.0.0.1', () => {
    fs.writeFileSync(portFile + '.tmp', String(server.address().port) + '\n');
    fs.renameSync(portFile + '.tmp', portFile);
});
process.on('SIGTERM', () => process.exit(0));
